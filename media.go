package lcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/lcptools/lcp/binding"
	"github.com/lcptools/lcp/llm"
)

// The modalities beyond text of lollms_client_instance: client.tti
// (generate_image), client.tts (generate_audio) and client.stt
// (transcribe_audio), with the listing of models and voices. The Python
// proxies reach them through host services.

// ImageGenerator makes images: what a Python tool's
// lollms_client_instance.generate_image (client.tti) reaches. A request's
// Model is the name the tool switched to with switch_tti, or "". *llm.Client
// (an OpenAI-compatible /images/generations) and *llm.Router are ones.
type ImageGenerator interface {
	GenerateImage(ctx context.Context, r *llm.ImageRequest) (*llm.Image, error)
}

// SpeechGenerator speaks text: lollms_client_instance.generate_audio
// (client.tts). *llm.Client (/audio/speech) and *llm.Router are ones.
type SpeechGenerator interface {
	GenerateSpeech(ctx context.Context, r *llm.SpeechRequest) (*llm.Audio, error)
}

// Transcriber writes down speech: lollms_client_instance.transcribe_audio
// (client.stt). *llm.Client (/audio/transcriptions) and *llm.Router are
// ones.
type Transcriber interface {
	Transcribe(ctx context.Context, r *llm.TranscriptionRequest) (*llm.Transcription, error)
}

// ImageEditor edits images: lollms_client_instance.edit_image
// (client.tti.edit_image), when the image model of Config.TTI implements
// it. *llm.Client (/images/edits) and *llm.Router are ones.
type ImageEditor interface {
	EditImage(ctx context.Context, r *llm.ImageEditRequest) (*llm.Image, error)
}

// ModelLister is implemented by models that list the names a tool can
// switch to (list_models of the Python proxies); *llm.Client lists its
// endpoint's models, *llm.Router its aliases.
type ModelLister interface {
	Models(ctx context.Context) ([]string, error)
}

// VoiceLister is implemented by speech models that list their voices
// (client.tts.list_voices).
type VoiceLister interface {
	Voices(ctx context.Context) ([]string, error)
}

// Service names of the modalities.
const (
	serviceModalities    = "client.modalities"
	serviceGenerateImage = "tti.generate_image"
	serviceEditImage     = "tti.edit_image"
	serviceGenerateAudio = "tts.generate_audio"
	serviceTranscribe    = "stt.transcribe_audio"
	serviceListModels    = "models.list"
	serviceListVoices    = "tts.list_voices"
)

// mediaServices are the services of the modalities.
func (e *Engine) mediaServices(m map[string]binding.Service) {
	m[serviceModalities] = e.modalities
	m[serviceGenerateImage] = e.generateImage
	m[serviceEditImage] = e.editImage
	m[serviceGenerateAudio] = e.generateAudio
	m[serviceTranscribe] = e.transcribe
	m[serviceListModels] = e.listModels
	m[serviceListVoices] = e.listVoices
	e.embedderServices(m)
}

// modalities says which models the host has beside the language model
// (whose presence comes with each call).
func (e *Engine) modalities(context.Context, *binding.ServiceRequest) (json.RawMessage, error) {
	return json.Marshal(map[string]bool{"tti": e.cfg.TTI != nil, "tts": e.cfg.TTS != nil, "stt": e.cfg.STT != nil,
		"ttm": e.cfg.TTM != nil, "ttv": e.cfg.TTV != nil, "rag": e.cfg.RAG != nil})
}

// mediaParams are the parameters the proxies send: the call's arguments
// they know, and the other keyword arguments in Options.
type mediaParams struct {
	Prompt         string                     `json:"prompt"`
	NegativePrompt string                     `json:"negative_prompt"`
	Width          int                        `json:"width"`
	Height         int                        `json:"height"`
	Text           string                     `json:"text"`
	Voice          string                     `json:"voice"`
	Format         string                     `json:"format"`
	Speed          float64                    `json:"speed"`
	Audio          []byte                     `json:"audio"`  // base64 in JSON
	Images         [][]byte                   `json:"images"` // base64 in JSON
	Mask           []byte                     `json:"mask"`
	FileName       string                     `json:"file_name"`
	Language       string                     `json:"language"`
	Model          string                     `json:"model"`
	Modality       string                     `json:"modality"`
	Options        map[string]json.RawMessage `json:"options"`
}

func readMediaParams(name string, raw json.RawMessage) (*mediaParams, error) {
	var p mediaParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%s: the parameters are not valid: %w", name, err)
	}
	for k, v := range p.Options {
		if string(v) == "null" {
			delete(p.Options, k)
		}
	}
	return &p, nil
}

// absent is the error of a modality the host lacks.
func absent(what, modality string) error {
	return fmt.Errorf("%s is not available: the host has no %s binding", what, modality)
}

func (e *Engine) generateImage(ctx context.Context, r *binding.ServiceRequest) (json.RawMessage, error) {
	if e.cfg.TTI == nil {
		return nil, absent("generate_image", "tti")
	}
	p, err := readMediaParams("generate_image", r.Params)
	if err != nil {
		return nil, err
	}
	img, err := e.cfg.TTI.GenerateImage(ctx, &llm.ImageRequest{Prompt: p.Prompt, NegativePrompt: p.NegativePrompt,
		Width: p.Width, Height: p.Height, Model: p.Model, Extra: p.Options})
	if err != nil {
		return nil, fmt.Errorf("generate_image failed: %w", err)
	}
	return json.Marshal(map[string]any{"data": base64.StdEncoding.EncodeToString(img.Data), "mime_type": img.MIMEType,
		"revised_prompt": img.RevisedPrompt})
}

func (e *Engine) editImage(ctx context.Context, r *binding.ServiceRequest) (json.RawMessage, error) {
	if e.cfg.TTI == nil {
		return nil, absent("edit_image", "tti")
	}
	editor, ok := e.cfg.TTI.(ImageEditor)
	if !ok {
		return nil, errors.New("edit_image is not supported by the host's image model (it only generates images)")
	}
	p, err := readMediaParams("edit_image", r.Params)
	if err != nil {
		return nil, err
	}
	if len(p.Images) == 0 {
		return nil, errors.New("edit_image: give images= (a path, bytes, or a list of them)")
	}
	if strings.TrimSpace(p.Prompt) == "" {
		return nil, errors.New("edit_image: give prompt=, the edit to make")
	}
	extra := map[string]string{}
	for k, v := range p.Options {
		var str string
		if json.Unmarshal(v, &str) == nil {
			extra[k] = str
		} else {
			extra[k] = string(v) // numbers and booleans as JSON writes them
		}
	}
	img, err := editor.EditImage(ctx, &llm.ImageEditRequest{Images: p.Images, Mask: p.Mask, Prompt: p.Prompt,
		Width: p.Width, Height: p.Height, Model: p.Model, Extra: extra})
	if err != nil {
		return nil, fmt.Errorf("edit_image failed: %w", err)
	}
	return json.Marshal(map[string]any{"data": base64.StdEncoding.EncodeToString(img.Data), "mime_type": img.MIMEType,
		"revised_prompt": img.RevisedPrompt})
}

func (e *Engine) generateAudio(ctx context.Context, r *binding.ServiceRequest) (json.RawMessage, error) {
	if e.cfg.TTS == nil {
		return nil, absent("generate_audio", "tts")
	}
	p, err := readMediaParams("generate_audio", r.Params)
	if err != nil {
		return nil, err
	}
	audio, err := e.cfg.TTS.GenerateSpeech(ctx, &llm.SpeechRequest{Input: p.Text, Voice: p.Voice, Model: p.Model,
		Format: p.Format, Speed: p.Speed, Extra: p.Options})
	if err != nil {
		return nil, fmt.Errorf("generate_audio failed: %w", err)
	}
	return json.Marshal(map[string]any{"data": base64.StdEncoding.EncodeToString(audio.Data), "mime_type": audio.MIMEType})
}

func (e *Engine) transcribe(ctx context.Context, r *binding.ServiceRequest) (json.RawMessage, error) {
	if e.cfg.STT == nil {
		return nil, absent("transcribe_audio", "stt")
	}
	p, err := readMediaParams("transcribe_audio", r.Params)
	if err != nil {
		return nil, err
	}
	if len(p.Audio) == 0 {
		return nil, errors.New("transcribe_audio: the audio is empty")
	}
	extra := map[string]string{}
	for k, v := range p.Options {
		var s string
		var f float64
		var b bool
		switch {
		case json.Unmarshal(v, &s) == nil:
			extra[k] = s
		case json.Unmarshal(v, &f) == nil:
			extra[k] = strconv.FormatFloat(f, 'g', -1, 64)
		case json.Unmarshal(v, &b) == nil:
			extra[k] = strconv.FormatBool(b)
		default:
			return nil, fmt.Errorf("transcribe_audio: the option %s must be a string, a number or a boolean", k)
		}
	}
	t, err := e.cfg.STT.Transcribe(ctx, &llm.TranscriptionRequest{Audio: p.Audio, FileName: p.FileName, Model: p.Model,
		Language: p.Language, Prompt: p.Prompt, Extra: extra})
	if err != nil {
		return nil, fmt.Errorf("transcribe_audio failed: %w", err)
	}
	return json.Marshal(map[string]any{"text": t.Text, "language": t.Language, "duration": t.Duration})
}

// listModels lists the names a tool can switch to: of one modality, or
// of all (client.list_models, as lollms concatenates them).
func (e *Engine) listModels(ctx context.Context, r *binding.ServiceRequest) (json.RawMessage, error) {
	p, err := readMediaParams("list_models", r.Params)
	if err != nil {
		return nil, err
	}
	var llmModel any = e.cfg.LLM
	if r.Call != nil && r.Call.Generator != nil {
		llmModel = r.Call.Generator
	}
	sources := []struct {
		name  string
		model any
	}{{"llm", llmModel}, {"tti", e.cfg.TTI}, {"tts", e.cfg.TTS}, {"stt", e.cfg.STT}}
	models := []string{}
	found := false
	for _, s := range sources {
		if p.Modality != "" && p.Modality != s.name {
			continue
		}
		found = true
		if l, ok := s.model.(ModelLister); ok {
			names, err := l.Models(ctx)
			if err != nil {
				return nil, fmt.Errorf("list_models (%s) failed: %w", s.name, err)
			}
			models = append(models, names...)
		}
	}
	if !found {
		return nil, fmt.Errorf("list_models: unknown modality %q", p.Modality)
	}
	return json.Marshal(map[string]any{"models": models})
}

func (e *Engine) listVoices(ctx context.Context, _ *binding.ServiceRequest) (json.RawMessage, error) {
	if e.cfg.TTS == nil {
		return nil, absent("list_voices", "tts")
	}
	voices := []string{}
	if l, ok := e.cfg.TTS.(VoiceLister); ok {
		v, err := l.Voices(ctx)
		if err != nil {
			return nil, fmt.Errorf("list_voices failed: %w", err)
		}
		voices = append(voices, v...)
	}
	return json.Marshal(map[string]any{"voices": voices})
}
