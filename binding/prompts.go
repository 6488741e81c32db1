package binding

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/lcptools/lcp/tool"
	"github.com/lcptools/lcp/worker"
)

// SystemPrompt is a library's contribution to the system prompt: the text
// its tool_<stem>_prompt() returned.
type SystemPrompt = tool.SystemPrompt

func (b *Binding) promptTimeout() time.Duration {
	if b.opts.PromptTimeout > 0 {
		return b.opts.PromptTimeout
	}
	return 5 * time.Second
}

// callPrompt runs a prompt function and returns its text.
func (b *Binding) callPrompt(ctx context.Context, e *entry, fn string) (string, error) {
	cfg, err := b.config(e.file.Stem)
	if err != nil {
		return "", err
	}
	req := &worker.Request{
		CallID:    tool.NewID(),
		Workspace: b.ws,
		Library:   e.library(),
		Function:  fn,
		Args:      json.RawMessage(`{}`),
		Context:   json.RawMessage(`{}`),
		Config:    cfg,
		Handlers:  b.handlers(),
		Timeout:   b.promptTimeout(),
	}
	ctx, cancel := context.WithTimeout(ctx, b.promptTimeout()+time.Second)
	defer cancel()
	gen, _ := b.begin(req.Library, false)
	reply, err := b.pool.Call(ctx, req, &callHost{b: b, ctx: ctx, stem: e.file.Stem})
	b.end(req.Library, gen)
	if err != nil {
		return "", err
	}
	switch {
	case reply.LoadError != nil:
		return "", fmt.Errorf("the library failed to load: %s: %s", reply.LoadError.Type, reply.LoadError.Message)
	case reply.NotModuleLevel:
		return "", fmt.Errorf("%s is not defined at module level", fn)
	case reply.Exception != nil:
		return "", fmt.Errorf("%s: %s", reply.Exception.Type, reply.Exception.Message)
	}
	var s string
	if err := json.Unmarshal(reply.Value, &s); err != nil {
		return "", fmt.Errorf("%s returned %s, not a string", fn, reply.Value)
	}
	return s, nil
}

// promptEntries returns, for each tool with a prompt function in its
// module, the function's name.
func hasPrompt(e *entry) (string, bool) {
	if e.file == nil || e.file.Source == nil || e.src.ParsedViaRegexFallback {
		return "", false
	}
	want := e.info.Name + "_prompt"
	for _, p := range e.file.Source.Prompts {
		if p.Name == want && p.TopLevel {
			return want, true
		}
	}
	return "", false
}

// applyPrompts replaces the descriptions of tools that have a prompt
// function, calling them concurrently the first time and taking the
// cached texts afterwards (promptCache). A failure keeps the static text
// and records one diagnostic.
func (b *Binding) applyPrompts(ctx context.Context, infos []tool.Info, entries []*entry) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, e := range entries {
		fn, ok := hasPrompt(e)
		if !ok {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, err := b.prompts.get(ctx, promptKey{e.file.Path, fn}, func(ctx context.Context) (string, error) {
				sem <- struct{}{}
				defer func() { <-sem }()
				return b.callPrompt(ctx, e, fn)
			}, func(err error) tool.Diagnostic {
				return tool.Diagnostic{Severity: "warning", Code: "prompt-failed", File: e.file.Path, Tool: e.info.Name,
					Message: fmt.Sprintf("%s failed, the static description is used: %v", fn, err)}
			})
			if err == nil {
				infos[i].Description = text
			}
		}()
	}
	wg.Wait()
}

// RefreshPrompts forgets the cached results of the prompt functions, so
// that the next listing runs them again (the watcher does it for the
// libraries whose files change).
func (b *Binding) RefreshPrompts() { b.prompts.invalidate() }

// SystemPrompts runs the library prompt functions (tool_<stem>_prompt
// where no tool tool_<stem> exists) of the registered libraries and
// returns their texts, in discovery order; the texts are cached like the
// tools' (RefreshPrompts). Failures are diagnostics.
func (b *Binding) SystemPrompts(ctx context.Context) []SystemPrompt {
	b.mu.RLock()
	type job struct {
		e  *entry
		fn string
	}
	var jobs []job
	for _, f := range b.files {
		if f.Source == nil || f.Source.SyntaxErrors != nil {
			continue
		}
		fn := "tool_" + f.Stem + "_prompt"
		if _, isTool := b.tools["tool_"+f.Stem]; isTool {
			continue
		}
		for _, p := range f.Source.Prompts {
			if p.Name == fn && p.TopLevel {
				jobs = append(jobs, job{&entry{file: f}, fn})
				break
			}
		}
	}
	b.mu.RUnlock()
	out := make([]*SystemPrompt, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, err := b.prompts.get(ctx, promptKey{j.e.file.Path, j.fn}, func(ctx context.Context) (string, error) {
				return b.callPrompt(ctx, j.e, j.fn)
			}, func(err error) tool.Diagnostic {
				return tool.Diagnostic{Severity: "warning", Code: "prompt-failed", File: j.e.file.Path,
					Message: fmt.Sprintf("%s failed: %v", j.fn, err)}
			})
			if err != nil {
				return
			}
			out[i] = &SystemPrompt{Library: j.e.file.Stem, File: j.e.file.Path, Text: text}
		}()
	}
	wg.Wait()
	var res []SystemPrompt
	for _, p := range out {
		if p != nil {
			res = append(res, *p)
		}
	}
	return res
}
