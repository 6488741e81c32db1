package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Credentials is what lcp keeps for one server: the client it signed in
// with and the tokens it got. Its String and LogValue never show a secret.
type Credentials struct {
	// Issuer is the authorization server that issued the tokens.
	Issuer string `json:"issuer,omitempty"`
	// TokenURL is the token endpoint, for refreshing.
	TokenURL string `json:"token_endpoint,omitempty"`
	// Resource is the resource indicator the tokens were asked for.
	Resource string `json:"resource,omitempty"`

	// ClientID and ClientSecret identify the client; AuthMethod is how it
	// authenticates at the token endpoint (none, client_secret_basic or
	// client_secret_post). A pre-registered client's secret is not
	// stored: it comes from the configuration.
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	AuthMethod   string `json:"token_endpoint_auth_method,omitempty"`
	// Registered is set for a client lcp registered itself (RFC 7591),
	// with the redirect URI it registered.
	Registered  bool   `json:"registered,omitempty"`
	RedirectURI string `json:"redirect_uri,omitempty"`

	// AccessToken, RefreshToken and Expiry are the tokens; Scopes what
	// they were granted.
	AccessToken  string    `json:"access_token,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Scopes       []string  `json:"scopes,omitempty"`
}

// String describes c without its secrets.
func (c *Credentials) String() string {
	if c == nil {
		return "<no credentials>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "client %q of %s", c.ClientID, c.Issuer)
	switch {
	case c.AccessToken == "":
		b.WriteString(", signed out")
	case c.Expiry.IsZero():
		b.WriteString(", token without expiry")
	default:
		fmt.Fprintf(&b, ", token valid until %s", c.Expiry.Format(time.RFC3339))
	}
	if c.RefreshToken != "" {
		b.WriteString(", refreshable")
	}
	if len(c.Scopes) > 0 {
		fmt.Fprintf(&b, ", scopes %q", strings.Join(c.Scopes, " "))
	}
	return b.String()
}

// LogValue is the form of c in a log record: no secret.
func (c *Credentials) LogValue() slog.Value { return slog.StringValue(c.String()) }

// GoString keeps secrets out of %#v too.
func (c *Credentials) GoString() string { return c.String() }

// valid reports whether the access token may be sent (with a margin, so
// that it does not expire on the way).
func (c *Credentials) valid(now time.Time) bool {
	return c != nil && c.AccessToken != "" && (c.Expiry.IsZero() || now.Add(expiryMargin).Before(c.Expiry))
}

const expiryMargin = 30 * time.Second

// Store keeps Credentials between runs, keyed by the URL of the MCP
// server. Implementations must be safe for concurrent use.
type Store interface {
	// Load returns the credentials of a server, or nil when there are none.
	Load(server string) (*Credentials, error)
	// Save replaces the credentials of a server.
	Save(server string, c *Credentials) error
	// Delete forgets a server (signing out); deleting what is not there
	// is not an error.
	Delete(server string) error
}

// StoreKey is the key under which a server's credentials are kept: its
// URL with scheme and host lowercased and without a fragment.
func StoreKey(server string) string {
	u, err := url.Parse(server)
	if err != nil {
		return server
	}
	u.Scheme, u.Host, u.Fragment, u.RawFragment = strings.ToLower(u.Scheme), strings.ToLower(u.Host), "", ""
	return u.String()
}

// MemoryStore is a Store that keeps nothing beyond the process, for tests
// and hosts that manage tokens themselves.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string]Credentials
}

// Load implements Store.
func (s *MemoryStore) Load(server string) (*Credentials, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.m[StoreKey(server)]
	if !ok {
		return nil, nil
	}
	c.Scopes = append([]string(nil), c.Scopes...)
	return &c, nil
}

// Save implements Store.
func (s *MemoryStore) Save(server string, c *Credentials) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]Credentials)
	}
	cp := *c
	cp.Scopes = append([]string(nil), c.Scopes...)
	s.m[StoreKey(server)] = cp
	return nil
}

// Delete implements Store.
func (s *MemoryStore) Delete(server string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, StoreKey(server))
	return nil
}

// DefaultStorePath is where a FileStore without a Path keeps its file:
// mcp-oauth.json in lcp's folder of the user's configuration directory
// ($XDG_CONFIG_HOME/lcp or ~/.config/lcp on Linux).
func DefaultStorePath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("oauth: no configuration directory for the token store: %w", err)
	}
	return filepath.Join(dir, "lcp", "mcp-oauth.json"), nil
}

// FileStore is a Store in one JSON file, readable by its owner only
// (0600, in a 0700 directory). Every change is a locked
// read-modify-write and an atomic rename, so that several lcp processes
// share it safely.
type FileStore struct {
	// Path of the file; DefaultStorePath when empty.
	Path string

	mu sync.Mutex
}

// storeFile is the file's content.
type storeFile struct {
	Version int                     `json:"version"`
	Servers map[string]*Credentials `json:"servers"`
}

func (s *FileStore) path() (string, error) {
	if s.Path != "" {
		return s.Path, nil
	}
	return DefaultStorePath()
}

// Load implements Store.
func (s *FileStore) Load(server string) (*Credentials, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.path()
	if err != nil {
		return nil, err
	}
	f, err := readStore(p)
	if err != nil {
		return nil, err
	}
	return f.Servers[StoreKey(server)], nil
}

// Save implements Store.
func (s *FileStore) Save(server string, c *Credentials) error {
	return s.update(func(f *storeFile) { f.Servers[StoreKey(server)] = c })
}

// Delete implements Store.
func (s *FileStore) Delete(server string) error {
	return s.update(func(f *storeFile) { delete(f.Servers, StoreKey(server)) })
}

// Servers lists the servers the file has credentials for, sorted.
func (s *FileStore) Servers() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.path()
	if err != nil {
		return nil, err
	}
	f, err := readStore(p)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(f.Servers))
	for k := range f.Servers {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

func (s *FileStore) update(change func(*storeFile)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.path()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("oauth: token store: %w", err)
	}
	unlock, err := lockFile(p + ".lock")
	if err != nil {
		return fmt.Errorf("oauth: token store: %w", err)
	}
	defer unlock()
	f, err := readStore(p)
	if err != nil {
		return err
	}
	change(f)
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("oauth: token store: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".mcp-oauth-*.tmp")
	if err != nil {
		return fmt.Errorf("oauth: token store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("oauth: token store: %w", err)
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("oauth: token store: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("oauth: token store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("oauth: token store: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("oauth: token store: %w", err)
	}
	return nil
}

// readStore reads the file; a missing file is an empty store.
func readStore(p string) (*storeFile, error) {
	f := &storeFile{Version: 1, Servers: map[string]*Credentials{}}
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("oauth: token store: %w", err)
	}
	if err := json.Unmarshal(data, f); err != nil {
		// The error of encoding/json names a position, never the content.
		return nil, fmt.Errorf("oauth: token store %s is not valid (delete it to sign in again): %w", p, err)
	}
	if f.Servers == nil {
		f.Servers = map[string]*Credentials{}
	}
	return f, nil
}
