// Package term is the terminal front end of the human in the loop: it
// puts confirmations and questions to the person at the terminal, for
// lcp call and lcp chat. It implements hitl.FrontEnd.
//
//	t := term.New(os.Stdin, os.Stderr) // answers from the terminal, prompts on stderr
//	defer t.Close()
//	broker := hitl.New(t, nil)
//	res, err := tool.Call(ctx, inventory, "tool_prepare_deployment", nil,
//		&tool.CallOptions{Respond: broker.Respond})
//
// On a terminal each prompt puts it in raw mode and restores it after,
// whatever happens:
//
//   - A confirmation shows the label, the asking tool and library, the
//     first 500 characters of the source (then "...") and argv, and asks
//     "[y]es / [n]o / [a]lways", answered by one key as a select is: y, n
//     or a (either case), no Enter. The answer must be explicit: Enter or
//     another key asks again (the seeds' terminal handler took an empty
//     line as yes), keys typed before the prompt appeared are dropped, and
//     so is what came with the answering key (the Enter of "y" and Enter).
//     After no, optional feedback for the agent is asked as a line; empty
//     means "User declined authorization.".
//   - A secret is typed with nothing echoed — no characters and no stars,
//     so that not even its length shows — as getpass does. An empty
//     answer declines; a default is never offered.
//   - A select lists numbered options with the default preselected: the
//     arrow keys (or j/k, Home, End) move, digits jump to an option number,
//     Enter chooses.
//   - Text shows its default (Enter takes it; without a default an empty
//     answer declines, as in the seeds); multiline text ends with Ctrl-D on
//     a line of its own.
//   - A form asks its schema's properties one by one.
//
// Ctrl-C (and Ctrl-D on an empty line) rejects a confirmation with
// "Operation cancelled by user." and declines a question; so does the end
// of the input. Keys typed before a prompt appears are discarded, so that
// nothing typed earlier can approve an action. Text from the tool (label,
// source, prompt, options) is printed with control characters and
// bidirectional overrides escaped: a tool cannot draw a fake prompt.
//
// Requests asked concurrently are shown one at a time, in turn, never
// interleaved. A request withdrawn while waiting for its turn (an always
// approval of another, a cancelled call) is never shown; one withdrawn
// while shown ends with a note saying why. Nothing reads the terminal
// between prompts.
//
// The answers come from the file given to New: the terminal on stdin, or
// the controlling terminal (OpenTTY) for a host whose stdin is a pipe.
// When the file is not a terminal (a pipe, a file) answers are read as
// lines: y/n/a, a number or option text for a select, text up to a line
// with a single "." for multiline text. This serves scripts and tests; lcp
// uses Unattended instead when there is no terminal.
//
// The package is built on golang.org/x/term (raw mode, terminal size)
// rather than a prompt library such as charm.land/huh: requests must be
// abandoned mid-prompt when withdrawn, serialized across goroutines, and
// read from a given file while stdout stays free — simple to do with a
// small line editor, awkward through a full-screen UI framework, and
// without a new dependency.
package term
