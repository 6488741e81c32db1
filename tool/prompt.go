package tool

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Prompt describes a prompt template a host offers to people: the
// libraries' system-prompt contributions, prompts a Go host registers,
// prompts of MCP servers. MCP clients list them (prompts/list) and get
// them with arguments (prompts/get), typically as slash commands.
type Prompt struct {
	// Name identifies the prompt.
	Name string `json:"name"`
	// Title is a name for people, possibly empty.
	Title string `json:"title,omitempty"`
	// Description says what the prompt is for.
	Description string `json:"description,omitempty"`
	// Arguments are what the person fills in.
	Arguments []PromptArgument `json:"arguments,omitempty"`
}

// PromptArgument is one argument of a prompt: a string.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptMessage is one message of a rendered prompt.
type PromptMessage struct {
	// Role is "user" or "assistant".
	Role string `json:"role"`
	// Content is the message: text, an image, a sound, a resource.
	Content Content `json:"content"`
}

// PromptResult is a prompt rendered with its arguments.
type PromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// PromptSet is a source of prompts. Implementations are safe for
// concurrent use.
type PromptSet interface {
	// Prompts lists the prompts, in a stable order.
	Prompts(ctx context.Context) ([]Prompt, error)
	// GetPrompt renders the named prompt with args. An unknown name is an
	// error wrapping ErrUnknownPrompt; missing required arguments a
	// *PromptArgumentsError.
	GetPrompt(ctx context.Context, name string, args map[string]string) (*PromptResult, error)
}

// PromptCompleter is a PromptSet that suggests values for prompt
// arguments as the person types (MCP completion/complete).
type PromptCompleter interface {
	// CompletePrompt returns values for the argument arg of the named
	// prompt that fit value, what has been typed so far; context holds
	// the arguments already given. No suggestion is an empty list.
	CompletePrompt(ctx context.Context, name, arg, value string, context map[string]string) ([]string, error)
}

// ErrUnknownPrompt is wrapped by the error of GetPrompt for a name no
// prompt has.
var ErrUnknownPrompt = errors.New("unknown prompt")

// PromptArgumentsError reports a prompt asked for without its required
// arguments.
type PromptArgumentsError struct {
	Prompt  string
	Missing []string
}

func (e *PromptArgumentsError) Error() string {
	return fmt.Sprintf("prompt %s needs the argument(s) %s", e.Prompt, strings.Join(e.Missing, ", "))
}

// CheckPromptArguments reports the required arguments of p that args
// lacks, as a *PromptArgumentsError.
func CheckPromptArguments(p *Prompt, args map[string]string) error {
	var missing []string
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return &PromptArgumentsError{Prompt: p.Name, Missing: missing}
	}
	return nil
}

// PromptDef is a prompt a Go host registers, with what renders it.
type PromptDef struct {
	Prompt
	// Get renders the prompt; args holds the required arguments (checked
	// before) and the optional ones given.
	Get func(ctx context.Context, args map[string]string) (*PromptResult, error)
	// Complete, when set, suggests values of an argument (see
	// PromptCompleter).
	Complete func(ctx context.Context, arg, value string, context map[string]string) ([]string, error)
}

// PromptList is a PromptSet of prompts a Go host defines (NewPrompts).
type PromptList struct {
	defs []PromptDef
}

// NewPrompts returns the prompts of defs, in that order. Every prompt
// needs a name (CheckName's characters) unique in the list and a Get.
func NewPrompts(defs ...PromptDef) (*PromptList, error) {
	seen := map[string]bool{}
	for _, d := range defs {
		if err := CheckName(d.Name); err != nil {
			return nil, fmt.Errorf("prompt: %w", err)
		}
		if seen[d.Name] {
			return nil, fmt.Errorf("prompt %s is defined twice", d.Name)
		}
		seen[d.Name] = true
		if d.Get == nil {
			return nil, fmt.Errorf("prompt %s has no Get", d.Name)
		}
	}
	return &PromptList{defs: append([]PromptDef(nil), defs...)}, nil
}

// Prompts lists the prompts.
func (l *PromptList) Prompts(context.Context) ([]Prompt, error) {
	out := make([]Prompt, len(l.defs))
	for i := range l.defs {
		out[i] = l.defs[i].Prompt
	}
	return out, nil
}

func (l *PromptList) find(name string) *PromptDef {
	for i := range l.defs {
		if l.defs[i].Name == name {
			return &l.defs[i]
		}
	}
	return nil
}

// GetPrompt renders a prompt after checking its required arguments.
func (l *PromptList) GetPrompt(ctx context.Context, name string, args map[string]string) (*PromptResult, error) {
	d := l.find(name)
	if d == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownPrompt, name)
	}
	if err := CheckPromptArguments(&d.Prompt, args); err != nil {
		return nil, err
	}
	if args == nil {
		args = map[string]string{}
	}
	return d.Get(ctx, args)
}

// CompletePrompt asks the prompt's Complete, if it has one.
func (l *PromptList) CompletePrompt(ctx context.Context, name, arg, value string, context map[string]string) ([]string, error) {
	d := l.find(name)
	if d == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownPrompt, name)
	}
	if d.Complete == nil {
		return nil, nil
	}
	return d.Complete(ctx, arg, value, context)
}

// ComposePrompts returns the prompts of every set, in order; when two
// sets have a prompt of the same name, the first wins. Nil sets are
// skipped. A set that fails to list is left out of the listing; when
// every one fails, their errors are returned.
func ComposePrompts(sets ...PromptSet) PromptSet {
	var keep promptSets
	for _, s := range sets {
		if s != nil {
			keep = append(keep, s)
		}
	}
	return keep
}

type promptSets []PromptSet

func (ps promptSets) Prompts(ctx context.Context) ([]Prompt, error) {
	var (
		out  []Prompt
		errs []error
	)
	seen := map[string]bool{}
	for _, s := range ps {
		list, err := s.Prompts(ctx)
		if err != nil {
			errs = append(errs, err)
		}
		for _, p := range list {
			if !seen[p.Name] {
				seen[p.Name] = true
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// owner returns the first set that lists the prompt.
func (ps promptSets) owner(ctx context.Context, name string) (PromptSet, error) {
	for _, s := range ps {
		list, _ := s.Prompts(ctx)
		for _, p := range list {
			if p.Name == name {
				return s, nil
			}
		}
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownPrompt, name)
}

func (ps promptSets) GetPrompt(ctx context.Context, name string, args map[string]string) (*PromptResult, error) {
	s, err := ps.owner(ctx, name)
	if err != nil {
		return nil, err
	}
	return s.GetPrompt(ctx, name, args)
}

func (ps promptSets) CompletePrompt(ctx context.Context, name, arg, value string, context map[string]string) ([]string, error) {
	s, err := ps.owner(ctx, name)
	if err != nil {
		return nil, err
	}
	if c, ok := s.(PromptCompleter); ok {
		return c.CompletePrompt(ctx, name, arg, value, context)
	}
	return nil, nil
}
