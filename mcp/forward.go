package mcp

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/lcptools/lcp/tool"
)

// Stateless replicas that keep a call live (ServerOptions.Replicas).
//
// A call that asks is kept running on the replica that started it, and
// its requestState names that replica. The client's retry may reach any
// replica: one that is not the call's forwards the request, as it came,
// to the call's replica, whose answer it relays. A forwarded request is
// never forwarded again.

// forwardedHeader marks a request one replica forwarded to another.
const forwardedHeader = "Lcp-Forwarded-By"

// keepsLive reports whether a stateless call of the tool info describes
// is kept live between its rounds (rather than replayed): when the
// replicas can reach each other and the tool may change something.
func (s *Server) keepsLive(info *tool.Info) bool {
	if s.opts.ReplicaID == "" || len(s.opts.Replicas) == 0 {
		return false
	}
	if a := info.Annotations; a != nil && (isTrue(a.ReadOnlyHint) || isTrue(a.IdempotentHint)) {
		return false
	}
	return true
}

func isTrue(b *bool) bool { return b != nil && *b }

// isTripState reports whether a requestState is one of a call kept live
// (tripState), from its payload, without checking its signature.
func isTripState(tok string) bool {
	p, _, ok := strings.Cut(tok, ".")
	if !ok || len(p) > maxStateLen {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return false
	}
	var v struct {
		V int `json:"v"`
	}
	return json.Unmarshal(b, &v) == nil && v.V == 2
}

// forwardTarget returns the URL of the replica that holds the call a
// request continues, or nil when this replica serves it.
func (s *Server) forwardTarget(r *http.Request, body []byte) *url.URL {
	if len(s.opts.Replicas) == 0 || r.Header.Get(forwardedHeader) != "" {
		return nil
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			RequestState string `json:"requestState"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != "tools/call" || !isTripState(m.Params.RequestState) {
		return nil
	}
	var st tripState
	if s.unseal(m.Params.RequestState, &st) != nil || st.Replica == "" || st.Replica == s.opts.ReplicaID {
		return nil
	}
	u, err := url.Parse(s.opts.Replicas[st.Replica])
	if err != nil || u.Host == "" {
		return nil
	}
	return u
}

// forward relays r to the replica at target.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, target *url.URL) {
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.URL.Path = target.Path
			pr.Out.Host = target.Host
			pr.Out.Header.Set(forwardedHeader, s.opts.ReplicaID)
		},
		FlushInterval: -1, // event streams as they come
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			s.opts.Logger.Warn("forwarding a call's retry to its replica", "target", target.Host, "error", err)
			http.Error(w, "the replica that holds this call cannot be reached: call the tool again", http.StatusBadGateway)
		},
	}
	p.ServeHTTP(w, r)
}
