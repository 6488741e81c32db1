package sandbox

import (
	"net/url"
	"slices"
	"strings"
)

// allowedEnv are the variables a sandboxed command gets from the host: the
// locale, the terminal, the time zone, the search path and the settings
// toolchains need to find their own files. Names ending in "*" are
// prefixes.
var allowedEnv = []string{
	"PATH", "LANG", "LANGUAGE", "LC_*", "TERM", "COLORTERM", "TZ", "NO_COLOR", "FORCE_COLOR",
	"CLICOLOR", "COLUMNS", "LINES", "USER", "LOGNAME",
	// Go.
	"GOROOT", "GOPATH", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GO111MODULE", "GOTOOLCHAIN",
	"CGO_ENABLED", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "GOEXPERIMENT", "GODEBUG",
	// Python.
	"VIRTUAL_ENV", "PYENV_ROOT", "PYENV_VERSION", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYTHONPATH",
	"PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "PIP_CACHE_DIR",
	"MPLBACKEND",
	// Node, Rust, Java.
	"NODE_PATH", "NVM_DIR", "NVM_BIN", "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "JAVA_HOME",
	// Certificates, and proxies without credentials in them.
	"SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
}

// Env builds the environment of a sandboxed command from the host's
// environment host (KEY=VALUE entries): only allow-listed variables pass
// (PATH, LANG and LC_*, TERM, TZ, the toolchains' own settings, ...) plus
// the names in extra, HOME is set to home and TMPDIR to /tmp. A variable
// whose name looks like a secret (IsSecretName) never passes, even when
// extra names it, and neither does a proxy setting that carries a
// password. Later entries of host win, as in the kernel.
func Env(host []string, home string, extra ...string) []string {
	vals := map[string]string{}
	var order []string
	for _, kv := range host {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || !passes(k, extra) {
			continue
		}
		if strings.HasSuffix(strings.ToLower(k), "_proxy") && proxyHasPassword(v) {
			continue
		}
		if _, seen := vals[k]; !seen {
			order = append(order, k)
		}
		vals[k] = v
	}
	out := make([]string, 0, len(order)+2)
	for _, k := range order {
		out = append(out, k+"="+vals[k])
	}
	if home != "" {
		out = append(out, "HOME="+home)
	}
	return append(out, "TMPDIR=/tmp")
}

func passes(name string, extra []string) bool {
	if IsSecretName(name) {
		return false
	}
	if slices.Contains(extra, name) {
		return true
	}
	for _, a := range allowedEnv {
		if p, ok := strings.CutSuffix(a, "*"); ok {
			if strings.HasPrefix(name, p) {
				return true
			}
		} else if a == name {
			return true
		}
	}
	return false
}

// secretParts are the parts of a variable name (split at '_', '-' and
// '.') that mark it as holding a secret; secretInfixes mark it wherever
// they appear in a part (APIKEY, ACCESSTOKEN, DBPASSWORD...).
var (
	secretParts   = []string{"KEY", "KEYS", "AUTH", "PAT", "PASS", "PWD", "DSN", "SALT", "OTP", "PIN", "SIG"}
	secretInfixes = []string{"KEY", "TOKEN", "SECRET", "PASSW", "CREDENTIAL", "CREDS", "COOKIE", "SESSION",
		"PRIVATE", "SIGNATURE", "BEARER", "OAUTH", "AUTHORIZATION", "APIAUTH"}
)

// IsSecretName reports whether an environment variable's name looks like
// it holds a secret: a key, a token, a password, credentials, a session
// (API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, DB_PASSWORD, NPM_AUTH,
// SENTRY_DSN, ...). Such variables never reach a sandboxed command.
func IsSecretName(name string) bool {
	if name == "PWD" || name == "OLDPWD" {
		return false
	}
	up := strings.ToUpper(name)
	for _, part := range strings.FieldsFunc(up, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if slices.Contains(secretParts, part) {
			return true
		}
		for _, w := range secretInfixes {
			if strings.Contains(part, w) {
				return true
			}
		}
	}
	return false
}

func proxyHasPassword(v string) bool {
	if !strings.Contains(v, "@") {
		return false
	}
	u, err := url.Parse(v)
	if err != nil {
		return true
	}
	_, has := u.User.Password()
	return has || u.User != nil
}
