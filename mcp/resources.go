package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/lcptools/lcp/tool"
)

// Resource is a document a Go host serves to MCP clients besides the
// tools: clients list it (resources/list), read it (resources/read) and
// may subscribe to its changes (resources/subscribe, then ResourceUpdated).
// LCP libraries have no resources of their own; a host adds what it has
// to offer (its documents, its data) with AddResource and
// AddResourceTemplate.
type Resource struct {
	// URI identifies the resource ("file:///notes/todo.md"); for a
	// template, an RFC 6570 URI template ("logs://day/{date}").
	URI string
	// Name, Title, Description and MIMEType describe it; Name defaults to
	// the URI.
	Name, Title, Description, MIMEType string
	// Read returns the contents of the resource at uri (for a template,
	// the URI the client asked for): embedded resource blocks
	// (tool.ResourceContent for text, tool.BlobContent for bytes); a block
	// without a URI gets uri. An error wrapping ErrResourceNotFound tells
	// the client there is no such resource.
	Read func(ctx context.Context, uri string) ([]tool.Content, error)
	// Complete, for a template, suggests values of one of its variables
	// as the person types (completion/complete); nil for none.
	Complete func(ctx context.Context, variable, value string, context map[string]string) ([]string, error)
}

// ErrResourceNotFound is what Resource.Read wraps for a URI it has no
// resource for.
var ErrResourceNotFound = errors.New("resource not found")

// resourceSet keeps the host's resources and templates: what
// subscriptions and completions are checked against.
type resourceSet struct {
	mu        sync.Mutex
	uris      map[string]bool
	templates map[string]*resourceTemplate
}

type resourceTemplate struct {
	Resource
	tmpl *uritemplate.Template
}

// template returns the template registered as uriTemplate, or nil.
func (rs *resourceSet) template(uriTemplate string) *resourceTemplate {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.templates[uriTemplate]
}

// has reports whether uri is a resource of the set or matches one of its
// templates.
func (rs *resourceSet) has(uri string) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.uris[uri] {
		return true
	}
	for _, t := range rs.templates {
		if t.tmpl.Regexp().MatchString(uri) {
			return true
		}
	}
	return false
}

// AddResource serves r (or replaces the resource of the same URI). The
// URI must be absolute and Read set.
func (s *Server) AddResource(r Resource) error {
	if err := checkResource(&r, false); err != nil {
		return err
	}
	s.resources.mu.Lock()
	if s.resources.uris == nil {
		s.resources.uris = map[string]bool{}
	}
	s.resources.uris[r.URI] = true
	s.resources.mu.Unlock()
	s.sdk.AddResource(&sdk.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType},
		readHandler(&r))
	return nil
}

// AddResourceTemplate serves the resources whose URIs match the template
// r.URI (or replaces the template of the same text).
func (s *Server) AddResourceTemplate(r Resource) error {
	if err := checkResource(&r, true); err != nil {
		return err
	}
	tmpl, err := uritemplate.New(r.URI)
	if err != nil {
		return fmt.Errorf("mcp: resource template %q: %w", r.URI, err)
	}
	s.resources.mu.Lock()
	if s.resources.templates == nil {
		s.resources.templates = map[string]*resourceTemplate{}
	}
	s.resources.templates[r.URI] = &resourceTemplate{Resource: r, tmpl: tmpl}
	s.resources.mu.Unlock()
	s.sdk.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType},
		readHandler(&r))
	return nil
}

// RemoveResources stops serving the resources and templates of these
// URIs.
func (s *Server) RemoveResources(uris ...string) {
	s.resources.mu.Lock()
	for _, u := range uris {
		delete(s.resources.uris, u)
		delete(s.resources.templates, u)
	}
	s.resources.mu.Unlock()
	s.sdk.RemoveResources(uris...)
	s.sdk.RemoveResourceTemplates(uris...)
}

// ResourceUpdated tells the clients subscribed to uri that it changed.
func (s *Server) ResourceUpdated(ctx context.Context, uri string) error {
	return s.sdk.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: uri})
}

func checkResource(r *Resource, template bool) error {
	what := "resource"
	if template {
		what = "resource template"
	}
	if r.Read == nil {
		return fmt.Errorf("mcp: %s %q has no Read", what, r.URI)
	}
	if !template {
		u, err := url.Parse(r.URI)
		if err != nil {
			return fmt.Errorf("mcp: %s %q: %w", what, r.URI, err)
		}
		if u.Scheme == "" {
			return fmt.Errorf("mcp: %s %q: the URI must be absolute (have a scheme)", what, r.URI)
		}
	}
	if r.Name == "" {
		r.Name = r.URI
	}
	return nil
}

// readHandler serves resources/read with r.Read.
func readHandler(r *Resource) sdk.ResourceHandler {
	read := r.Read
	return func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		uri := req.Params.URI
		blocks, err := read(ctx, uri)
		if err != nil {
			if errors.Is(err, ErrResourceNotFound) {
				return nil, sdk.ResourceNotFoundError(uri)
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("reading %s: %v", uri, err)}
		}
		out := &sdk.ReadResourceResult{Contents: make([]*sdk.ResourceContents, 0, len(blocks))}
		for i := range blocks {
			b := blocks[i]
			if b.Type != tool.ContentResource {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
					Message: fmt.Sprintf("reading %s: block %d is a %q block, not the contents of a resource", uri, i, b.Type)}
			}
			if b.URI == "" {
				b.URI = uri
			}
			out.Contents = append(out.Contents, toSDKResource(&b))
		}
		return out, nil
	}
}

// subscribe accepts a subscription to a resource the server serves (or
// one its templates match); other URIs are refused as unknown resources.
func (s *Server) subscribe(_ context.Context, req *sdk.SubscribeRequest) error {
	if !s.resources.has(req.Params.URI) {
		return sdk.ResourceNotFoundError(req.Params.URI)
	}
	return nil
}

func (s *Server) unsubscribe(context.Context, *sdk.UnsubscribeRequest) error { return nil }
