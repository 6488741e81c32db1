package lcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/lcptools/lcp/binding"
)

// MusicRequest asks for music: client.generate_music (Prompt),
// generate_song and generate_song_from_lyrics (Lyrics too).
type MusicRequest struct {
	Prompt string
	Lyrics string
	// Model is what switch_ttm chose in this call, empty for the default.
	Model string
	// Options are the call's other keyword arguments, as JSON.
	Options map[string]json.RawMessage
}

// VideoRequest asks for a video: client.generate_video.
type VideoRequest struct {
	Prompt string
	// Model is what switch_ttv chose in this call, empty for the default.
	Model   string
	Options map[string]json.RawMessage
}

// Media is generated sound or video: its bytes and their type
// (audio/wav, video/mp4...), which the Python tool gets as bytes with a
// mime_type attribute.
type Media struct {
	Data     []byte
	MIMEType string
}

// Passage is one answer of a retrieval query.
type Passage struct {
	Text   string  `json:"text"`
	Source string  `json:"source,omitempty"`
	Score  float64 `json:"score"`
}

// MusicGenerator is the host's music model (client.ttm).
type MusicGenerator interface {
	GenerateMusic(ctx context.Context, r *MusicRequest) (*Media, error)
}

// VideoGenerator is the host's video model (client.ttv).
type VideoGenerator interface {
	GenerateVideo(ctx context.Context, r *VideoRequest) (*Media, error)
}

// Retriever is the host's retrieval store (client.rag): Query returns up
// to topK passages nearest to query; Add stores a document (its file name
// and bytes) and returns the store's id for it.
type Retriever interface {
	Query(ctx context.Context, query string, topK int) ([]Passage, error)
	Add(ctx context.Context, fileName string, data []byte) (string, error)
}

// Service names of the embedder's modalities.
const (
	serviceGenerateMusic = "ttm.generate_music"
	serviceGenerateVideo = "ttv.generate_video"
	serviceRAGQuery      = "rag.query"
	serviceRAGAdd        = "rag.add_document"
)

func (e *Engine) embedderServices(m map[string]binding.Service) {
	m[serviceGenerateMusic] = e.generateMusic
	m[serviceGenerateVideo] = e.generateVideo
	m[serviceRAGQuery] = e.queryRAG
	m[serviceRAGAdd] = e.addDocument
}

// serviceParams are what the TTM, TTV and RAG proxies send.
type serviceParams struct {
	Prompt   string                     `json:"prompt"`
	Lyrics   string                     `json:"lyrics"`
	Query    string                     `json:"query"`
	TopK     int                        `json:"top_k"`
	FileName string                     `json:"file_name"`
	Data     []byte                     `json:"audio"` // base64 in JSON
	Model    string                     `json:"model"`
	Options  map[string]json.RawMessage `json:"options"`
}

func readServiceParams(name string, raw json.RawMessage) (*serviceParams, error) {
	var p serviceParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%s: the parameters are not valid: %w", name, err)
	}
	return &p, nil
}

func mediaAnswer(m *Media) (json.RawMessage, error) {
	return json.Marshal(map[string]any{"data": base64.StdEncoding.EncodeToString(m.Data), "mime_type": m.MIMEType})
}

func (e *Engine) generateMusic(ctx context.Context, r *binding.ServiceRequest) (json.RawMessage, error) {
	if e.cfg.TTM == nil {
		return nil, absent("generate_music", "ttm")
	}
	p, err := readServiceParams("generate_music", r.Params)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Prompt) == "" && strings.TrimSpace(p.Lyrics) == "" {
		return nil, errors.New("generate_music: give prompt= (or lyrics= for a song)")
	}
	m, err := e.cfg.TTM.GenerateMusic(ctx, &MusicRequest{Prompt: p.Prompt, Lyrics: p.Lyrics, Model: p.Model, Options: p.Options})
	if err != nil {
		return nil, fmt.Errorf("generate_music failed: %w", err)
	}
	return mediaAnswer(m)
}

func (e *Engine) generateVideo(ctx context.Context, r *binding.ServiceRequest) (json.RawMessage, error) {
	if e.cfg.TTV == nil {
		return nil, absent("generate_video", "ttv")
	}
	p, err := readServiceParams("generate_video", r.Params)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Prompt) == "" {
		return nil, errors.New("generate_video: give prompt=, the video to make")
	}
	m, err := e.cfg.TTV.GenerateVideo(ctx, &VideoRequest{Prompt: p.Prompt, Model: p.Model, Options: p.Options})
	if err != nil {
		return nil, fmt.Errorf("generate_video failed: %w", err)
	}
	return mediaAnswer(m)
}

func (e *Engine) queryRAG(ctx context.Context, r *binding.ServiceRequest) (json.RawMessage, error) {
	if e.cfg.RAG == nil {
		return nil, absent("query_rag", "rag")
	}
	p, err := readServiceParams("query_rag", r.Params)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Query) == "" {
		return nil, errors.New("query_rag: the query is empty")
	}
	if p.TopK <= 0 {
		return nil, fmt.Errorf("query_rag: top_k must be at least 1, not %d", p.TopK)
	}
	hits, err := e.cfg.RAG.Query(ctx, p.Query, p.TopK)
	if err != nil {
		return nil, fmt.Errorf("query_rag failed: %w", err)
	}
	if hits == nil {
		hits = []Passage{}
	}
	return json.Marshal(map[string]any{"results": hits})
}

func (e *Engine) addDocument(ctx context.Context, r *binding.ServiceRequest) (json.RawMessage, error) {
	if e.cfg.RAG == nil {
		return nil, absent("add_document_to_rag", "rag")
	}
	p, err := readServiceParams("add_document_to_rag", r.Params)
	if err != nil {
		return nil, err
	}
	if len(p.Data) == 0 {
		return nil, errors.New("add_document_to_rag: the document is empty")
	}
	id, err := e.cfg.RAG.Add(ctx, p.FileName, p.Data)
	if err != nil {
		return nil, fmt.Errorf("add_document_to_rag failed: %w", err)
	}
	return json.Marshal(map[string]any{"id": id})
}
