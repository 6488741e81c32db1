package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/lcptools/lcp/builtin/workspace"
	"github.com/lcptools/lcp/native"
	"github.com/lcptools/lcp/sandbox"
	"github.com/lcptools/lcp/tool"
)

// Limits of the listing and search tools.
const (
	maxListEntries = 1000
	maxGrepFile    = 2 << 20 // larger files are not searched
	sniffLen       = 8 << 10 // bytes looked at for binary detection
)

var confirmOnly = tool.Capabilities{Confirm: true}

func (b *lib) workspaceTools() ([]*native.Tool, error) {
	var out []*native.Tool
	add := func(t *native.Tool, err error) error {
		if err != nil {
			return err
		}
		out = append(out, t)
		return nil
	}
	errs := []error{
		add(newTool(workspaceLib, "tool_write_file",
			"Writes text content to a file in the workspace, creating the file and any missing folders, or replacing its content.",
			`{"type": "object", "properties": {
  "file_name": {"type": "string", "description": "Path of the file, relative to the workspace."},
  "content": {"type": "string", "description": "The complete text to write."}},
 "required": ["file_name", "content"]}`, confirmOnly, changes("Write file", true, true, false), b.writeFile)),
		add(newTool(workspaceLib, "tool_append_file",
			"Appends text to the end of a file in the workspace, creating it when missing.",
			`{"type": "object", "properties": {
  "file_name": {"type": "string", "description": "Path of the file, relative to the workspace."},
  "content": {"type": "string", "description": "The text to append (add a trailing newline if you want one)."}},
 "required": ["file_name", "content"]}`, confirmOnly, changes("Append to file", false, false, false), b.appendFile)),
		add(newTool(workspaceLib, "tool_read_file",
			"Reads a text file of the workspace, whole or a range of lines. Binary files are refused; very large files are cut, with a note saying how to read the rest.",
			`{"type": "object", "properties": {
  "file_name": {"type": "string", "description": "Path of the file, relative to the workspace."},
  "start_line": {"type": "integer", "description": "First line to return, counting from 1.", "default": 1},
  "end_line": {"type": "integer", "description": "Last line to return (inclusive); omit to read to the end."}},
 "required": ["file_name"]}`, tool.Capabilities{}, reads("Read file"), b.readFile)),
		add(newTool(workspaceLib, "tool_list_files",
			"Lists the files and folders of a workspace directory with their sizes, optionally recursively (.git, node_modules, __pycache__ and similar are skipped).",
			`{"type": "object", "properties": {
  "directory": {"type": "string", "description": "Directory to list, relative to the workspace.", "default": "."},
  "recursive": {"type": "boolean", "description": "List sub-directories too.", "default": false}},
 "required": []}`, tool.Capabilities{}, reads("List files"), b.listFiles)),
		add(newTool(workspaceLib, "tool_find_files",
			"Finds files whose path matches a glob pattern: '*.py' matches at any depth, 'src/**/*.go' spans folders.",
			`{"type": "object", "properties": {
  "pattern": {"type": "string", "description": "Glob pattern (*, ?, [abc], and ** for any number of folders)."},
  "path": {"type": "string", "description": "Directory to search from, relative to the workspace.", "default": "."},
  "max_results": {"type": "integer", "description": "Maximum number of paths to return.", "default": 50}},
 "required": ["pattern"]}`, tool.Capabilities{}, reads("Find files"), b.findFiles)),
		add(newTool(workspaceLib, "tool_grep_files",
			"Searches the text files of the workspace for a pattern and returns matching lines as file:line: text.",
			`{"type": "object", "properties": {
  "pattern": {"type": "string", "description": "What to search for: a regular expression (RE2 syntax) in the case_sensitive and case_insensitive modes, literal text in exact, words in words and fuzzy."},
  "file_extension": {"type": "string", "description": "Only search files with this extension (e.g. 'py' or '.md'); several may be separated by commas.", "default": null},
  "max_results": {"type": "integer", "description": "Maximum number of matching lines to return.", "default": 50},
  "search_mode": {"type": "string", "description": "exact (literal text, case-sensitive), case_sensitive, case_insensitive (regular expressions), words (every word present, any order), or fuzzy (every word present, allowing typos).", "default": "case_insensitive"},
  "sort_by_relevance": {"type": "boolean", "description": "Best matches first instead of file order.", "default": true},
  "path": {"type": "string", "description": "Directory to search in, relative to the workspace.", "default": "."}},
 "required": ["pattern"]}`, tool.Capabilities{}, reads("Search file contents"), b.grepFiles)),
		add(newTool(workspaceLib, "tool_file_info",
			"Gives information about a file or folder of the workspace: type, size, modification time, number of lines for text files.",
			`{"type": "object", "properties": {
  "file_name": {"type": "string", "description": "Path of the file or folder, relative to the workspace."}},
 "required": ["file_name"]}`, tool.Capabilities{}, reads("File information"), b.fileInfo)),
	}
	return out, errors.Join(errs...)
}

// openWorkspace opens the directory workspace_tools work in: root_path
// from the library configuration, else the call's workspace.
func (b *lib) openWorkspace(ctx context.Context) (*workspace.Workspace, error) {
	dir := b.workspaceDir(ctx)
	if root := call(ctx).ConfigString("root_path"); root != "" {
		if filepath.IsAbs(root) {
			dir = root
		} else {
			dir = filepath.Join(dir, root)
		}
	}
	return workspace.Open(dir)
}

// pathError turns a workspace error into the text the LLM reads.
func pathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		switch {
		case errors.Is(err, workspace.ErrOutside):
			return fmt.Sprintf("'%s' is outside the workspace: use a path relative to the workspace, without .. leading out or links pointing out.", pe.Path)
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Sprintf("'%s' does not exist in the workspace.", pe.Path)
		case errors.Is(err, workspace.ErrHardLinked):
			return fmt.Sprintf("'%s' has several hard links and may be shared with a file outside the workspace; it is not read or appended to.", pe.Path)
		}
		return fmt.Sprintf("'%s': %v", pe.Path, pe.Err)
	}
	return err.Error()
}

// approveWrite applies the autonomy level to a write: strict asks for
// every write, safe for writes inside .git (where git keeps hooks and
// configuration it runs), full_access never.
func approveWrite(ctx context.Context, ws *workspace.Workspace, verb, name string, content string) (string, error) {
	rel := ws.Display(name)
	// Judged where the write lands: a link named "hooks" may lead into
	// .git/hooks.
	landing := rel
	if r, err := ws.Resolve(name); err == nil {
		landing = filepath.ToSlash(r)
	}
	vcs := ""
	for _, part := range strings.Split(landing, "/") {
		if slices.Contains(sandbox.VCSDirs, part) && vcs == "" {
			vcs = part
		}
	}
	inGit := vcs != ""
	var why []string
	if inGit {
		why = []string{"the file lands inside " + vcs + ", where version control keeps hooks and configuration that it runs"}
	}
	preview := content
	if len(preview) > 400 {
		preview = preview[:400] + "..."
	}
	return approve(ctx, inGit, fmt.Sprintf("%s file %s", verb, rel), preview, why)
}

type writeArgs struct {
	FileName string `json:"file_name"`
	Content  string `json:"content"`
}

func (b *lib) writeFile(ctx context.Context, in writeArgs) (map[string]any, error) {
	return b.write(ctx, in, "Write", func(ws *workspace.Workspace) error {
		return ws.WriteFile(in.FileName, []byte(in.Content))
	})
}

func (b *lib) appendFile(ctx context.Context, in writeArgs) (map[string]any, error) {
	return b.write(ctx, in, "Append to", func(ws *workspace.Workspace) error {
		return ws.AppendFile(in.FileName, []byte(in.Content))
	})
}

func (b *lib) write(ctx context.Context, in writeArgs, verb string, do func(*workspace.Workspace) error) (map[string]any, error) {
	ws, err := b.openWorkspace(ctx)
	if err != nil {
		return failure(err.Error(), nil), nil
	}
	defer ws.Close()
	if _, err := ws.Rel(in.FileName); err != nil {
		return failure(pathError(err), nil), nil
	}
	if msg, err := approveWrite(ctx, ws, verb, in.FileName, in.Content); err != nil || msg != "" {
		return failure(msg, nil), err
	}
	if err := do(ws); err != nil {
		return failure(pathError(err), nil), nil
	}
	rel := ws.Display(in.FileName)
	done := "Wrote"
	if verb != "Write" {
		done = "Appended"
	}
	return map[string]any{"success": true,
		"output":    fmt.Sprintf("%s %d bytes to '%s'.", done, len(in.Content), rel),
		"file_name": rel, "bytes_written": len(in.Content)}, nil
}

type readArgs struct {
	FileName  string `json:"file_name"`
	StartLine *int   `json:"start_line"`
	EndLine   *int   `json:"end_line"`
}

func (b *lib) readFile(ctx context.Context, in readArgs) (map[string]any, error) {
	ws, err := b.openWorkspace(ctx)
	if err != nil {
		return failure(err.Error(), nil), nil
	}
	defer ws.Close()
	limit := configInt(call(ctx).Config, "max_read_bytes", DefaultMaxRead)
	f, err := ws.Open(in.FileName)
	if err != nil {
		return failure(pathError(err), nil), nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return failure(pathError(err), nil), nil
	}
	rel := ws.Display(in.FileName)
	br := bufio.NewReaderSize(f, sniffLen)
	head, _ := br.Peek(sniffLen)
	if isBinary(head) {
		return failure(fmt.Sprintf("'%s' is a binary file (%s, %d bytes); only text files can be read.",
			rel, http.DetectContentType(head), fi.Size()), map[string]any{"file_name": rel, "size": fi.Size()}), nil
	}
	start, end := 1, 0
	if in.StartLine != nil && *in.StartLine > 1 {
		start = *in.StartLine
	}
	if in.EndLine != nil && *in.EndLine > 0 {
		end = *in.EndLine
		if end < start {
			return failure(fmt.Sprintf("end_line %d is before start_line %d.", end, start), nil), nil
		}
	}
	var buf bytes.Buffer
	line, truncated, lastLine := 0, false, 0
	for {
		text, err := br.ReadString('\n')
		if text != "" {
			line++
			if line >= start && (end == 0 || line <= end) {
				if buf.Len()+len(text) > limit {
					truncated = true
					break
				}
				buf.WriteString(text)
				lastLine = line
			}
			if end != 0 && line >= end {
				break
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return failure(pathError(err), nil), nil
		}
	}
	content := strings.ToValidUTF8(buf.String(), "\uFFFD")
	payload := map[string]any{"success": true, "output": content, "file_name": rel, "size": fi.Size(),
		"start_line": start, "end_line": lastLine}
	if start > line {
		payload["output"] = ""
		payload["note"] = fmt.Sprintf("The file has only %d lines.", line)
	}
	if truncated {
		payload["truncated"] = true
		payload["output"] = content + fmt.Sprintf("\n[... cut at %d bytes: read on with start_line=%d ...]\n", limit, lastLine+1)
	}
	return payload, nil
}

// isBinary reports whether the start of a file looks binary: a NUL byte,
// or bytes that are not UTF-8 (a sequence cut at the end is allowed).
func isBinary(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			return len(b) >= utf8.UTFMax || utf8.FullRune(b)
		}
		b = b[n:]
	}
	return false
}

type listArgs struct {
	Directory *string `json:"directory"`
	Recursive bool    `json:"recursive"`
}

func (b *lib) listFiles(ctx context.Context, in listArgs) (map[string]any, error) {
	ws, err := b.openWorkspace(ctx)
	if err != nil {
		return failure(err.Error(), nil), nil
	}
	defer ws.Close()
	dir := "."
	if in.Directory != nil && *in.Directory != "" {
		dir = *in.Directory
	}
	fi, err := ws.Stat(dir)
	if err != nil {
		return failure(pathError(err), nil), nil
	}
	if !fi.IsDir() {
		return failure(fmt.Sprintf("'%s' is a file, not a directory.", ws.Display(dir)), nil), nil
	}
	type entry struct {
		Path string `json:"path"`
		Type string `json:"type"`
		Size int64  `json:"size,omitempty"`
	}
	var entries []entry
	truncated := false
	addEntry := func(rel string, d fs.DirEntry) {
		e := entry{Path: rel, Type: "file"}
		switch {
		case d.IsDir():
			e.Type = "directory"
		case d.Type()&fs.ModeSymlink != 0:
			e.Type = "symlink"
		default:
			if info, err := d.Info(); err == nil {
				e.Size = info.Size()
			}
		}
		entries = append(entries, e)
	}
	if in.Recursive {
		err = ws.Walk(dir, func(rel string, d fs.DirEntry) error {
			if len(entries) >= maxListEntries {
				truncated = true
				return fs.SkipAll
			}
			addEntry(rel, d)
			return nil
		})
	} else {
		var des []fs.DirEntry
		des, err = ws.ReadDir(dir)
		for _, d := range des {
			if len(entries) >= maxListEntries {
				truncated = true
				break
			}
			addEntry(d.Name(), d)
		}
	}
	if err != nil {
		return failure(pathError(err), nil), nil
	}
	var sb strings.Builder
	shown := ws.Display(dir)
	fmt.Fprintf(&sb, "Contents of '%s' (%d entries):\n", shown, len(entries))
	for _, e := range entries {
		switch e.Type {
		case "directory":
			fmt.Fprintf(&sb, "%s/\n", e.Path)
		case "symlink":
			fmt.Fprintf(&sb, "%s@\n", e.Path)
		default:
			fmt.Fprintf(&sb, "%s (%s)\n", e.Path, humanSize(e.Size))
		}
	}
	if len(entries) == 0 {
		sb.WriteString("(empty)\n")
	}
	if truncated {
		fmt.Fprintf(&sb, "[... stopped after %d entries ...]\n", maxListEntries)
	}
	if entries == nil {
		entries = []entry{}
	}
	return map[string]any{"success": true, "output": sb.String(), "directory": shown, "files": entries,
		"count": len(entries), "truncated": truncated}, nil
}

func humanSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
}

type findArgs struct {
	Pattern    string  `json:"pattern"`
	Path       *string `json:"path"`
	MaxResults *int    `json:"max_results"`
}

func (b *lib) findFiles(ctx context.Context, in findArgs) (map[string]any, error) {
	ws, err := b.openWorkspace(ctx)
	if err != nil {
		return failure(err.Error(), nil), nil
	}
	defer ws.Close()
	if !workspace.ValidPattern(in.Pattern) {
		return failure(fmt.Sprintf("'%s' is not a valid glob pattern.", in.Pattern), nil), nil
	}
	dir := "."
	if in.Path != nil && *in.Path != "" {
		dir = *in.Path
	}
	max := 50
	if in.MaxResults != nil && *in.MaxResults > 0 {
		max = *in.MaxResults
	}
	base := ws.Display(dir)
	var matches []string
	truncated := false
	err = ws.Walk(dir, func(rel string, d fs.DirEntry) error {
		if !workspace.Match(in.Pattern, rel) {
			return nil
		}
		if len(matches) >= max {
			truncated = true
			return fs.SkipAll
		}
		matches = append(matches, path.Join(base, rel))
		return nil
	})
	if err != nil {
		return failure(pathError(err), nil), nil
	}
	out := fmt.Sprintf("No file matches '%s' in '%s'.", in.Pattern, base)
	if len(matches) > 0 {
		out = fmt.Sprintf("%d match(es) for '%s':\n%s", len(matches), in.Pattern, strings.Join(matches, "\n"))
		if truncated {
			out += fmt.Sprintf("\n[... more matches; raise max_results above %d ...]", max)
		}
	}
	if matches == nil {
		matches = []string{}
	}
	return map[string]any{"success": true, "output": out, "matches": matches, "count": len(matches), "truncated": truncated}, nil
}

type infoArgs struct {
	FileName string `json:"file_name"`
}

func (b *lib) fileInfo(ctx context.Context, in infoArgs) (map[string]any, error) {
	ws, err := b.openWorkspace(ctx)
	if err != nil {
		return failure(err.Error(), nil), nil
	}
	defer ws.Close()
	lfi, err := ws.Lstat(in.FileName)
	if err != nil {
		return failure(pathError(err), nil), nil
	}
	rel := ws.Display(in.FileName)
	res := map[string]any{"success": true, "file_name": rel, "modified": lfi.ModTime().UTC().Format("2006-01-02T15:04:05Z"),
		"permissions": lfi.Mode().Perm().String()}
	fi := lfi
	if lfi.Mode()&fs.ModeSymlink != 0 {
		res["symlink"] = true
		if fi, err = ws.Stat(in.FileName); err != nil {
			res["type"] = "symlink"
			res["output"] = fmt.Sprintf("'%s' is a symbolic link that cannot be followed: %s", rel, pathError(err))
			return res, nil
		}
	}
	switch {
	case fi.IsDir():
		res["type"] = "directory"
		n := 0
		if des, err := ws.ReadDir(in.FileName); err == nil {
			n = len(des)
		}
		res["entries"] = n
		res["output"] = fmt.Sprintf("'%s' is a directory with %d entries, modified %s.", rel, n, res["modified"])
	case fi.Mode().IsRegular():
		res["type"] = "file"
		res["size"] = fi.Size()
		desc := fmt.Sprintf("'%s' is a file of %s, modified %s", rel, humanSize(fi.Size()), res["modified"])
		if f, err := ws.Open(in.FileName); err == nil {
			head := make([]byte, sniffLen)
			k, _ := io.ReadFull(f, head)
			head = head[:k]
			res["mime_type"] = http.DetectContentType(head)
			if isBinary(head) {
				res["binary"] = true
				desc += ", binary (" + res["mime_type"].(string) + ")"
			} else if fi.Size() <= DefaultMaxRead*4 {
				if _, err := f.Seek(0, io.SeekStart); err == nil {
					lines := countLines(f)
					res["lines"] = lines
					desc += fmt.Sprintf(", %d lines of text", lines)
				}
			}
			f.Close()
		} else {
			desc += " (" + pathError(err) + ")"
		}
		res["output"] = desc + "."
	default:
		res["type"] = "other"
		res["output"] = fmt.Sprintf("'%s' is not a regular file or directory (%s).", rel, fi.Mode().Type())
	}
	return res, nil
}

func countLines(r io.Reader) int {
	br := bufio.NewReader(r)
	n, last := 0, byte('\n')
	buf := make([]byte, 32<<10)
	for {
		k, err := br.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if k > 0 {
			last = buf[k-1]
		}
		if err != nil {
			break
		}
	}
	if last != '\n' {
		n++
	}
	return n
}
