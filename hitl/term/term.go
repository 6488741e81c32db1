package term

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/lcptools/lcp/hitl"
	"github.com/lcptools/lcp/tool"
	xterm "golang.org/x/term"
)

// SourceLimit is how many characters of a confirmation's source the
// prompt shows (the seeds' 500), followed by "..." when there are more.
const SourceLimit = 500

// The reasons the terminal gives the tool.
const (
	// Cancelled is the reason of a confirmation refused with Ctrl-C or
	// Ctrl-D (the seeds' text).
	Cancelled = "Operation cancelled by user."
	// Declined is the reason of a confirmation answered no without
	// feedback (the seeds' text).
	Declined = "User declined authorization."
	// QuestionCancelled is the reason of a question left with Ctrl-C,
	// Ctrl-D or an empty answer.
	QuestionCancelled = "Cancelled by user."
)

// Terminal is the terminal front end: it implements hitl.FrontEnd.
type Terminal struct {
	f   *os.File // held so that the file is not finalized (closed) while in use
	in  *input
	out io.Writer
	tty bool
	fd  int
	err error // from newInput; Ask reports it

	turn chan struct{} // one prompt at a time
	raw  bool          // the terminal is in raw mode: write \r\n
	wmu  sync.Mutex
}

// New returns the terminal front end reading answers from tty and writing
// prompts to out — os.Stderr in lcp, so that stdout stays for results.
// When tty is a terminal (term.IsTerminal) prompts use it in raw mode
// (arrow keys, hidden secrets, Ctrl-C as a key) and restore it after each
// prompt; otherwise answers are read as lines (see the package doc). The
// Terminal does not close tty; Close releases what New allocated.
func New(tty *os.File, out io.Writer) *Terminal {
	t := &Terminal{f: tty, out: out, turn: make(chan struct{}, 1), fd: -1}
	rc, err := tty.SyscallConn()
	if err == nil {
		// Control, unlike Fd, leaves a pollable file in non-blocking mode.
		err = rc.Control(func(fd uintptr) { t.fd = int(fd) })
	}
	if err == nil {
		t.in, err = newInput(tty, t.fd)
	}
	t.err = err
	t.tty = err == nil && xterm.IsTerminal(t.fd)
	return t
}

// IsTerminal reports whether the Terminal reads a real terminal.
func (t *Terminal) IsTerminal() bool { return t.tty }

// Close releases the Terminal's resources; it does not close the files
// given to New. Ask must not be called afterwards.
func (t *Terminal) Close() error {
	if t.in == nil {
		return nil
	}
	return t.in.close()
}

// Ask shows r and waits for the person's answer. Requests asked
// concurrently are shown one after the other, never interleaved; a
// request withdrawn while it waits for its turn is never shown, and one
// withdrawn while shown is closed with a note saying why. Ctrl-C and
// Ctrl-D (or the end of the input) reject a confirmation and decline a
// question; the terminal is restored in every case.
func (t *Terminal) Ask(ctx context.Context, r *tool.Request) (tool.Response, error) {
	if t.err != nil {
		return tool.Response{}, fmt.Errorf("terminal: %w", t.err)
	}
	select {
	case t.turn <- struct{}{}:
	case <-ctx.Done():
		return tool.Response{}, context.Cause(ctx)
	}
	defer func() { <-t.turn }()
	if ctx.Err() != nil {
		return tool.Response{}, context.Cause(ctx)
	}
	if t.tty {
		state, err := xterm.MakeRaw(t.fd)
		if err != nil {
			return tool.Response{}, fmt.Errorf("terminal: raw mode: %w", err)
		}
		// After raw mode: a line typed but not ended in canonical mode
		// only becomes readable now, and must not answer the prompt.
		t.in.discard()
		t.setRaw(true)
		defer func() {
			t.setRaw(false)
			_ = xterm.Restore(t.fd, state)
		}()
	}
	resp, err := t.ask(ctx, r)
	if err != nil && ctx.Err() != nil {
		t.write("\n" + withdrawnNote(context.Cause(ctx)) + "\n")
		return tool.Response{}, context.Cause(ctx)
	}
	return resp, err
}

func withdrawnNote(cause error) string {
	switch {
	case errors.Is(cause, hitl.ErrTimedOut):
		return "(no answer in time: the request timed out)"
	case errors.Is(cause, hitl.ErrAnswered):
		return "(answered elsewhere)"
	}
	return "(the request was withdrawn: the call ended)"
}

func (t *Terminal) ask(ctx context.Context, r *tool.Request) (tool.Response, error) {
	switch r.Kind {
	case tool.KindConfirm:
		return t.confirm(ctx, r)
	case tool.KindText:
		return t.text(ctx, r)
	case tool.KindSecret:
		return t.secret(ctx, r)
	case tool.KindSelect:
		return t.choose(ctx, r)
	case tool.KindForm:
		return t.form(ctx, r)
	}
	return tool.Response{}, fmt.Errorf("terminal: cannot ask a %q request", r.Kind)
}

func (t *Terminal) setRaw(on bool) {
	t.wmu.Lock()
	t.raw = on
	t.wmu.Unlock()
}

// write prints s, with CR LF line ends while the terminal is raw (raw
// mode turns off the terminal's own newline translation).
func (t *Terminal) write(s string) {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if t.raw {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	_, _ = io.WriteString(t.out, s)
}

func (t *Terminal) printf(format string, args ...any) { t.write(fmt.Sprintf(format, args...)) }

// readLine reads one answer line: edited on a raw terminal (echo off for
// secrets), as bytes otherwise.
func (t *Terminal) readLine(ctx context.Context, echo bool) (string, error) {
	if t.tty {
		return t.readRawLine(ctx, echo)
	}
	return t.readPlainLine(ctx)
}

const rule = "────────────────────────────────────────────────────────────"

// header prints the box top of a request: a headline and who asks.
func (t *Terminal) header(headline string, r *tool.Request) {
	t.printf("\n%s\n%s\n", rule, headline)
	var who []string
	if r.Tool != "" {
		who = append(who, "tool "+clean(r.Tool, false))
	}
	if r.Library != "" {
		who = append(who, "library "+clean(r.Library, false))
	}
	if len(who) > 0 {
		t.printf("(%s)\n", strings.Join(who, ", "))
	}
	t.write(rule + "\n")
}

// confirm asks yes / no / always, with optional feedback on no. A raw
// terminal takes the answer as one key, as selects do; answers read as
// lines take y, yes, n, no, a or always and Enter.
func (t *Terminal) confirm(ctx context.Context, r *tool.Request) (tool.Response, error) {
	label := r.Label
	if label == "" {
		label = r.Title
	}
	t.header("APPROVAL REQUIRED: "+clean(label, false), r)
	if r.Source != "" {
		t.write(clean(truncate(r.Source, SourceLimit), true) + "\n")
	}
	if len(r.Argv) > 0 {
		q := make([]string, len(r.Argv))
		for i, a := range r.Argv {
			q[i] = clean(strconv.Quote(a), false)
		}
		t.printf("argv: %s\n", strings.Join(q, " "))
	}
	t.write(rule + "\n")
	for {
		t.write("Authorize action? [y]es / [n]o / [a]lways: ")
		var line string
		var err error
		if t.tty {
			line, err = t.readChoiceKey(ctx)
		} else {
			line, err = t.readLine(ctx, true)
		}
		if err != nil {
			if ctx.Err() != nil || !isCancel(err) {
				return tool.Response{}, err
			}
			return r.Declined(Cancelled), nil
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return r.Submitted(tool.Allow), nil
		case "a", "always":
			t.write("Approved for the rest of the session (same library and action).\n")
			return r.Submitted(tool.Always), nil
		case "n", "no":
			t.write("Optional feedback for the agent: ")
			fb, err := t.readLine(ctx, true)
			if err != nil && (ctx.Err() != nil || !isCancel(err)) {
				return tool.Response{}, err
			}
			if fb = strings.TrimSpace(fb); fb == "" {
				fb = Declined
			}
			return r.Declined(fb), nil
		}
		t.write("Please answer y (yes, once), n (no) or a (always for this session).\n")
	}
}

// readChoiceKey reads the key that answers a confirmation on a raw
// terminal: y, n or a (either case) is echoed with a line end and
// returned at once, and what was typed with it dropped; Ctrl-C is errInterrupt and Ctrl-D io.EOF; Enter and
// other keys are answered with "?" so the prompt is asked again.
func (t *Terminal) readChoiceKey(ctx context.Context) (string, error) {
	k, err := t.readKey(ctx)
	if err != nil {
		return "", err
	}
	switch k.kind {
	case keyInterrupt:
		t.write("\n")
		return "", errInterrupt
	case keyEOF:
		t.write("\n")
		return "", io.EOF
	case keyRune:
		switch c := unicode.ToLower(k.r); c {
		case 'y', 'n', 'a':
			// What came with the key (the Enter of a habit of typing
			// "y" and Enter) answers nothing.
			t.in.discard()
			t.write(string(c) + "\n")
			return string(c), nil
		}
	}
	t.write("?\n")
	return "", nil
}

func isCancel(err error) bool { return errors.Is(err, errInterrupt) || errors.Is(err, io.EOF) }

// questionHeader prints a question's title and prompt.
func (t *Terminal) questionHeader(r *tool.Request, fallback string) {
	title := r.Title
	if title == "" {
		title = fallback
	}
	t.header(clean(title, false), r)
	if r.Prompt != "" {
		t.write(clean(r.Prompt, true) + "\n")
	}
}

// text asks for free text; an empty answer is the default, or declines
// when there is none (as the seeds' terminal handler).
func (t *Terminal) text(ctx context.Context, r *tool.Request) (tool.Response, error) {
	t.questionHeader(r, "Input required")
	if r.Default != nil {
		t.printf("(Enter for the default: %s)\n", clean(*r.Default, false))
	}
	var (
		answer string
		err    error
	)
	switch {
	case r.Multiline && t.tty:
		t.write("(several lines: Enter for a new line, Ctrl-D to finish, Ctrl-C to cancel)\n")
		answer, err = t.readRawText(ctx)
	case r.Multiline:
		answer, err = t.readPlainText(ctx)
	default:
		t.write("> ")
		answer, err = t.readLine(ctx, true)
	}
	if err != nil {
		if ctx.Err() != nil || !isCancel(err) {
			return tool.Response{}, err
		}
		return r.Declined(QuestionCancelled), nil
	}
	if !r.Multiline {
		answer = strings.TrimSpace(answer)
	}
	if answer == "" {
		if r.Default != nil {
			return r.Submitted(*r.Default), nil
		}
		return r.Declined(QuestionCancelled), nil
	}
	return r.Submitted(answer), nil
}

// readPlainText reads lines from a non-terminal input up to a line with a
// single "." or the end of the input.
func (t *Terminal) readPlainText(ctx context.Context) (string, error) {
	var lines []string
	for {
		line, err := t.readPlainLine(ctx)
		if err == io.EOF && len(lines) > 0 {
			break
		}
		if err != nil {
			return "", err
		}
		if line == "." {
			break
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n"), nil
}

// secret asks for a secret with echo off: nothing is shown while typing,
// not even stars. An empty answer declines; a default is never offered.
func (t *Terminal) secret(ctx context.Context, r *tool.Request) (tool.Response, error) {
	t.questionHeader(r, "Secret required")
	if t.tty {
		t.write("(typing is hidden)\n")
	}
	t.write("> ")
	answer, err := t.readLine(ctx, false)
	if err != nil {
		if ctx.Err() != nil || !isCancel(err) {
			return tool.Response{}, err
		}
		return r.Declined(QuestionCancelled), nil
	}
	if answer == "" {
		return r.Declined(QuestionCancelled), nil
	}
	return r.Submitted(answer), nil
}
