// Package shell decides whether a shell command may run without asking
// the operator in the `safe` autonomy level, and prepares its environment.
//
// Where lcp has its kernel sandbox (package sandbox), the sandbox is the
// boundary and this package has one job: finding the permissions beyond
// it that a command needs (Verdict.Needs: the network, writes outside the
// workspace, the host itself, writes into .git), so that safe mode asks
// for those before running. Without the sandbox, Verdict.Decision is what
// safe mode does: it asks before anything not proven harmless.
//
// Classify parses the command as bash with mvdan.cc/sh and walks the whole
// tree: every command of every list, pipeline, subshell, block, loop,
// condition, function body, command and process substitution, here-doc
// body and assignment value is judged on its own. The command runs
// directly only when all of them pass; anything that cannot be judged
// (parse errors, names computed at run time, unknown commands) asks.
//
//	v := shell.Classify("ls; rm -rf ~", &shell.Options{Workspace: ws})
//	// v.Decision == shell.Ask
//	// v.Reasons  == ["`rm -rf ~`: rm deletes files"]
//
// # The read-only allow-list
//
// A command runs directly only if its name is a literal (not computed at
// run time), it is a bare name or lives in /bin, /usr/bin, /usr/local/bin,
// /sbin, /usr/sbin or /usr/local/sbin, and it is one of:
//
//   - shell builtins that read state or steer control flow: : true false
//     echo pwd cd pushd popd exit return break continue shift jobs type
//     which; printf (not -v), read (into plain names), test and [ (no -v
//     or -R, no operand that could become one), set (only -e -u -x -v -f
//     -C and -o errexit|nounset|xtrace|pipefail|verbose|noglob|noclobber),
//     wait (job numbers only);
//   - reading and listing: ls dir vdir cat tac head tail wc nl grep egrep
//     fgrep zcat bzcat xzcat zgrep stat du df basename dirname realpath
//     readlink diff cmp comm od hexdump strings jq md5sum sha*sum b2sum
//     cksum sum base64 base32 basenc; find without -exec -execdir -ok
//     -okdir -delete -fprint -fprint0 -fprintf -fls; tree (-o inside the
//     workspace, no -R); file (no -C); rg (no --pre, --pre-glob,
//     --hostname-bin); fd and fdfind (no -x, -X, --exec, --exec-batch);
//   - text filters: cut tr rev fold fmt column paste join expand unexpand
//     numfmt expr tsort seq yes sleep; sort (-o inside the workspace, no
//     --compress-program); uniq and xxd (an output operand inside the
//     workspace, options read as they read them: uniq's --group takes
//     its method only after '=', xxd's -c takes the next word whatever
//     it is); shuf (-o inside the workspace); sed (the script parsed as
//     GNU sed parses it — labels end at blanks and ';', e and s///e ask,
//     w and s///w are judged as writes, r as reads; no -f; -i rewrites
//     existing files, so it asks, and a backup suffix with a '/' asks;
//     --sandbox skips the script check); awk gawk mawk nawk (an inline
//     program, tokenized with its strings, regular expressions and
//     comments: system, pipes and @ directives ask, print > "file" is
//     judged as a write, any other redirection asks; no -f);
//   - system information: uname whoami id groups arch nproc uptime free ps
//     locale getconf printenv cal lsb_release; date (no --set, only
//     +FORMAT operands); hostname (no operand, no -F);
//   - writes inside the workspace: tee mkdir touch cp (not -s or -l;
//     copying links from outside asks) mv (sources and destination; it
//     moves files away, so it asks without a sandbox), see below;
//   - git with only the global options -C, --no-pager, -P,
//     --no-optional-locks, --*-pathspecs, --no-replace-objects,
//     --no-lazy-fetch, --no-advice, and a read-only subcommand: status log
//     diff show shortlog blame annotate describe rev-parse rev-list
//     ls-files ls-tree cat-file show-ref for-each-ref name-rev merge-base
//     count-objects check-ignore check-attr whatchanged version cherry
//     diff-tree diff-files diff-index show-branch grep range-diff; branch
//     and tag in their listing forms; remote with no operand, -v or
//     get-url; config reading a value; stash, notes list|show; worktree
//     list; reflog show. Never with --output, --ext-diff or (grep) -O.
//     Options are matched as GNU getopt and git read them, abbreviations
//     included (--out is --output). git -C asks unless it names a folder
//     of the workspace that is not a bare repository; git after cd asks;
//     and any git command asks when the repository's or the user's
//     configuration sets diff drivers, filters or includes (they run
//     programs even for git diff);
//   - wrappers, judged by the command they run: env (-i, -0, -u, and
//     assignments judged as below; not -S or -C), timeout, nice, command
//     (-v and -V only look up), time (-o inside the workspace, read as
//     getopt reads -ao FILE and -oFILE), stdbuf, nohup, xargs (only with
//     echo ls wc stat du file basename dirname realpath md5sum sha1sum
//     sha256sum sha512sum: the arguments it appends are not seen, so
//     nothing that prints file contents);
//   - an interpreter, shell or build tool asked only for its version:
//     python3 --version, node -v, go version, ...
//
// Everything else asks, with a reason naming what it does: deletes files
// (rm, rmdir, shred, unlink, truncate — also inside the workspace), escalates
// privileges (sudo, su, doas, pkexec, ...), uses the network (curl, wget,
// nc, ssh, scp, rsync, git fetch|pull|push|clone, /dev/tcp redirections),
// starts a nested shell (bash, sh, zsh, ...), runs an interpreter or
// build scripts (python, node, perl, make, npm, go, ...), runs commands
// that are not judged (eval, exec, source, ., trap, alias, watch, ...),
// changes the system (chmod, kill, ln, dd, package managers, ...).
//
// # Writes
//
// Writing inside the workspace is the agent's ordinary work, as it is for
// workspace_tools in safe mode, so output redirections (>, >>, >|, &>,
// &>>, <>, >&file) and the write operands of the commands above run
// directly when the target is a literal path inside the workspace:
// relative (and no cd, pushd or popd anywhere in the command, since a loop
// makes their order meaningless) or absolute below the workspace, after
// resolving every symbolic link that exists. /dev/null, /dev/stdout,
// /dev/stderr and /dev/fd/N are always allowed. A write asks when its
// target is outside, computed at run time, under ~user, inside a .git
// directory (git runs hooks and configuration from there), an existing
// file with several hard links, or an existing file it would replace (>,
// >|, &>, <>, tee without -a, cp, sort -o, ...: without a sandbox nothing
// brings the old content back; >> and tee -a only add). A copy into a
// folder is judged by the name it lands at. Any path through /proc/PID/
// root, cwd, fd, exe, environ or mem asks, whatever PID it names.
//
// # Code hidden in values
//
// Bash evaluates some values as code: a variable named in arithmetic is
// evaluated as arithmetic, and an array subscript in it runs command
// substitutions (x='a[$(rm -rf ~)]'; echo $((x))). So arithmetic may use
// only numbers and $#, $?, $$, $!, $N; ${!x} (indirect), ${x@P}, [[ -v ]],
// test -v, printf -v, declare -i and -n, let, and read into subscripted
// names ask. Assignments, prefixed or exported, to PATH, IFS, PS0-PS4,
// PROMPT_COMMAND, HOME, CDPATH, BASH_ENV, ENV, SHELLOPTS, BASHOPTS,
// PAGER, EDITOR, VISUAL, LESSOPEN, RIPGREP_CONFIG_PATH, GCONV_PATH, SHELL,
// BROWSER, CURL_HOME, AWKPATH, TAR_OPTIONS, GOFLAGS and any LD_*, DYLD_*,
// GIT_*, XDG_*, PYTHON*, NODE_*, PERL*, RUBY* variable ask — however they
// are assigned: NAME=..., export and declare, read NAME, for and select
// loops, ${NAME:=...}. IFS before a command (IFS= read -r line) is fine.
// Arguments of commands whose options are checked must not be able to
// become options at run time: an unquoted expansion (which may split), or
// a glob or brace expansion that starts the word, asks.
//
// # Credentials
//
// Reads are allowed anywhere, but a literal or glob argument naming a
// credential store (~/.ssh, ~/.aws, ~/.gnupg, ~/.netrc, ~/.npmrc,
// ~/.docker/config.json, ~/.kube, /etc/shadow, /proc/*/environ, ...) asks,
// since its content would reach the LLM, and so does a recursive grep or
// rg over the home folder or a folder above it. This is a best effort,
// not a boundary.
//
// # Environment
//
// SafeEnv prepares the environment of a command safe mode runs without
// asking on a machine without the sandbox: variables whose names look like
// secrets are removed, pagers are cat and git's fsmonitor, hooks,
// signature programs and transports are switched off through
// GIT_CONFIG_COUNT, so that a repository's configuration cannot turn git
// status into a program launcher.
package shell
