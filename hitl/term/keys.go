package term

import (
	"context"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
)

// keyKind is what a key press means to a prompt.
type keyKind int

const (
	keyRune      keyKind = iota // a printable character
	keyEnter                    // Enter (CR or LF)
	keyBackspace                // Backspace or Delete-left
	keyUp                       // arrow up
	keyDown                     // arrow down
	keyHome                     // Home
	keyEnd                      // End
	keyInterrupt                // Ctrl-C
	keyEOF                      // Ctrl-D
	keyKill                     // Ctrl-U: erase the line
	keyOther                    // anything else, ignored
)

type key struct {
	kind keyKind
	r    rune
}

// errInterrupt is Ctrl-C at a prompt.
var errInterrupt = errors.New("interrupted")

// readKey decodes one key press from raw terminal input.
func (t *Terminal) readKey(ctx context.Context) (key, error) {
	c, err := t.in.readByte(ctx)
	if err != nil {
		return key{}, err
	}
	switch {
	case c == '\r' || c == '\n':
		return key{kind: keyEnter}, nil
	case c == 0x7f || c == 0x08:
		return key{kind: keyBackspace}, nil
	case c == 0x03:
		return key{kind: keyInterrupt}, nil
	case c == 0x04:
		return key{kind: keyEOF}, nil
	case c == 0x15:
		return key{kind: keyKill}, nil
	case c == 0x1b:
		return t.readEscape(ctx)
	case c < 0x20:
		return key{kind: keyOther}, nil
	case c < utf8.RuneSelf:
		return key{kind: keyRune, r: rune(c)}, nil
	}
	// A multi-byte UTF-8 character: its first byte says how long it is.
	b := []byte{c}
	want := 0
	switch {
	case c&0xe0 == 0xc0:
		want = 2
	case c&0xf0 == 0xe0:
		want = 3
	case c&0xf8 == 0xf0:
		want = 4
	default:
		return key{kind: keyOther}, nil
	}
	for len(b) < want {
		c, err := t.in.readByte(ctx)
		if err != nil {
			return key{}, err
		}
		b = append(b, c)
	}
	r, _ := utf8.DecodeRune(b)
	if r == utf8.RuneError {
		return key{kind: keyOther}, nil
	}
	return key{kind: keyRune, r: r}, nil
}

// readEscape decodes what follows ESC. Terminals send a key's escape
// sequence in one piece, so an ESC with nothing after it is the Esc key,
// which prompts ignore.
func (t *Terminal) readEscape(ctx context.Context) (key, error) {
	if t.in.buffered() == 0 {
		return key{kind: keyOther}, nil
	}
	c, err := t.in.readByte(ctx)
	if err != nil {
		return key{}, err
	}
	if c != '[' && c != 'O' {
		return key{kind: keyOther}, nil // Alt+key
	}
	var params []byte
	for range 16 { // a bound, against endless parameter bytes
		c, err = t.in.readByte(ctx)
		if err != nil {
			return key{}, err
		}
		if c >= 0x40 && c <= 0x7e {
			break
		}
		params = append(params, c)
	}
	switch {
	case c == 'A':
		return key{kind: keyUp}, nil
	case c == 'B':
		return key{kind: keyDown}, nil
	case c == 'H' || (c == '~' && (string(params) == "1" || string(params) == "7")):
		return key{kind: keyHome}, nil
	case c == 'F' || (c == '~' && (string(params) == "4" || string(params) == "8")):
		return key{kind: keyEnd}, nil
	}
	return key{kind: keyOther}, nil
}

// readRawLine is a small line editor on a raw terminal: printable keys,
// Backspace, Ctrl-U; Enter ends the line; Ctrl-C is errInterrupt and
// Ctrl-D on an empty line io.EOF. Without echo nothing at all is written
// while typing: not the characters, not stars, so that not even a secret's
// length shows.
func (t *Terminal) readRawLine(ctx context.Context, echo bool) (string, error) {
	var line []rune
	defer func() { clear(line) }()
	for {
		k, err := t.readKey(ctx)
		if err != nil {
			return "", err
		}
		switch k.kind {
		case keyEnter:
			t.write("\n")
			return string(line), nil
		case keyInterrupt:
			t.write("^C\n")
			return "", errInterrupt
		case keyEOF:
			if len(line) == 0 {
				t.write("\n")
				return "", io.EOF
			}
		case keyBackspace:
			if len(line) > 0 {
				line = line[:len(line)-1]
				if echo {
					t.write("\b \b")
				}
			}
		case keyKill:
			if echo {
				t.write(strings.Repeat("\b \b", len(line)))
			}
			line = line[:0]
		case keyRune:
			line = append(line, k.r)
			if echo {
				t.write(string(k.r))
			}
		}
	}
}

// readRawText reads several lines: Enter starts a new line, Ctrl-D ends
// the text, Ctrl-C is errInterrupt.
func (t *Terminal) readRawText(ctx context.Context) (string, error) {
	var text []rune
	lineStart := 0
	for {
		k, err := t.readKey(ctx)
		if err != nil {
			return "", err
		}
		switch k.kind {
		case keyEnter:
			text = append(text, '\n')
			lineStart = len(text)
			t.write("\n")
		case keyInterrupt:
			t.write("^C\n")
			return "", errInterrupt
		case keyEOF:
			if lineStart != len(text) {
				t.write("\n")
			}
			return strings.TrimRight(string(text), "\n"), nil
		case keyBackspace:
			if len(text) > lineStart {
				text = text[:len(text)-1]
				t.write("\b \b")
			}
		case keyKill:
			t.write(strings.Repeat("\b \b", len(text)-lineStart))
			text = text[:lineStart]
		case keyRune:
			text = append(text, k.r)
			t.write(string(k.r))
		}
	}
}

// readPlainLine reads a line from input that is not a terminal (a pipe, a
// file): bytes up to a newline, without its CR; io.EOF when nothing is
// left.
func (t *Terminal) readPlainLine(ctx context.Context) (string, error) {
	var b []byte
	defer func() { clear(b) }()
	for {
		c, err := t.in.readByte(ctx)
		if err == io.EOF && len(b) > 0 {
			break
		}
		if err != nil {
			return "", err
		}
		if c == '\n' {
			break
		}
		b = append(b, c)
	}
	return strings.ToValidUTF8(strings.TrimSuffix(string(b), "\r"), "\uFFFD"), nil
}
