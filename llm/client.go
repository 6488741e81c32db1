package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults of a Client.
const (
	// DefaultTimeout bounds a request: the whole of a non-streamed one,
	// and each wait for the next piece of a streamed one.
	DefaultTimeout = 5 * time.Minute
	// DefaultMaxResponseBytes bounds the body of a response.
	DefaultMaxResponseBytes = 32 << 20
)

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// Client talks to one OpenAI-compatible endpoint. Its fields are read on
// every request and must not change meanwhile; a Client is safe for
// concurrent use.
type Client struct {
	// BaseURL is the API's base, e.g. http://localhost:8080/v1 or
	// https://api.openai.com/v1; requests go to BaseURL + "/chat/completions".
	BaseURL string
	// Model is the model requests name unless they set their own. Servers
	// that serve a single model (llama.cpp) accept an empty one.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <key>", and only
	// there.
	APIKey string
	// HTTPClient sends the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Timeout bounds each request (DefaultTimeout when zero); a negative
	// value means no limit.
	Timeout time.Duration
	// MaxResponseBytes bounds each response body (DefaultMaxResponseBytes
	// when zero).
	MaxResponseBytes int64
	// Header holds extra headers for every request (a proxy's, an
	// organization id...).
	Header http.Header
	// Voice is the voice of speech requests that name none (see
	// GenerateSpeech); empty means DefaultVoice.
	Voice string
}

// TimeoutError reports a request that got no complete answer within the
// Client's Timeout. errors.Is(err, context.DeadlineExceeded) is true.
type TimeoutError struct {
	Limit time.Duration
}

func (e *TimeoutError) Error() string { return fmt.Sprintf("no answer within %s", e.Limit) }

// Is makes errors.Is(err, context.DeadlineExceeded) true.
func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

func (c *Client) timeout() time.Duration {
	if c.Timeout == 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

func (c *Client) maxBytes() int64 {
	if c.MaxResponseBytes <= 0 {
		return DefaultMaxResponseBytes
	}
	return c.MaxResponseBytes
}

func (c *Client) httpClient() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	return http.DefaultClient
}

// endpoint returns the URL of path under BaseURL, and its form safe to
// show.
func (c *Client) endpoint(path string) (full, shown string, err error) {
	if c.BaseURL == "" {
		return "", "", ErrNoEndpoint
	}
	full = strings.TrimRight(c.BaseURL, "/") + path
	u, perr := url.Parse(full)
	if perr != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", "", fmt.Errorf("llm: base URL %q is not an http(s) URL", redactURL(c.BaseURL))
	}
	return full, u.Redacted(), nil
}

// redactURL hides a password in a URL that may not parse.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	if i := strings.Index(s, "@"); i >= 0 {
		return "..." + s[i:]
	}
	return s
}

// exchange is one request in flight.
type exchange struct {
	c       *Client
	method  string
	shown   string
	ctx     context.Context
	cancel  context.CancelCauseFunc
	timer   *time.Timer
	idle    bool
	resp    *http.Response
	limited *countingReader
}

// start sends a request and returns the exchange once the status line and
// headers arrived. idle makes Timeout bound each wait rather than the whole
// exchange (streams).
func (c *Client) start(ctx context.Context, method, path string, body []byte, contentType, accept string, idle bool) (*exchange, error) {
	full, shown, err := c.endpoint(path)
	if err != nil {
		return nil, err
	}
	x := &exchange{c: c, method: method, shown: shown, idle: idle}
	x.ctx, x.cancel = context.WithCancelCause(ctx)
	if d := c.timeout(); d > 0 {
		x.timer = time.AfterFunc(d, func() { x.cancel(&TimeoutError{Limit: d}) })
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(x.ctx, method, full, rd)
	if err != nil {
		x.close()
		return nil, fmt.Errorf("llm: %s %s: %w", method, shown, err)
	}
	for k, vs := range c.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if body != nil {
		if contentType == "" {
			contentType = "application/json"
		}
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", accept)
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "lcp")
	}
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		err = x.fail(err)
		x.close()
		return nil, err
	}
	x.resp = resp
	x.limited = &countingReader{r: resp.Body, left: c.maxBytes() + 1, x: x}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer x.close()
		return nil, x.httpError()
	}
	return x, nil
}

// close releases the exchange.
func (x *exchange) close() {
	if x.resp != nil {
		// Drain a little so the connection can be reused, then close.
		_, _ = io.CopyN(io.Discard, x.resp.Body, 4<<10)
		x.resp.Body.Close()
	}
	if x.timer != nil {
		x.timer.Stop()
	}
	x.cancel(nil)
}

// touch restarts the idle timer of a stream; the timer of other exchanges
// bounds the whole exchange.
func (x *exchange) touch() {
	if x.idle && x.timer != nil {
		x.timer.Reset(x.c.timeout())
	}
}

// fail turns a transport error into the error the caller sees: the
// timeout or the caller's cancellation when that is what happened, with
// the request named and never a password.
func (x *exchange) fail(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if cause := context.Cause(x.ctx); cause != nil {
		var te *TimeoutError
		if errors.As(cause, &te) {
			err = te
		} else if x.ctx.Err() != nil {
			err = cause
		}
	}
	return fmt.Errorf("llm: %s %s: %w", x.method, x.shown, err)
}

// httpError reads an error response into an *HTTPError.
func (x *exchange) httpError() error {
	body, _ := io.ReadAll(io.LimitReader(x.resp.Body, maxErrorBody))
	body = []byte(redact(string(body), x.c.APIKey))
	msg, typ, code := errorMessage(body)
	return &HTTPError{
		Method: x.method, URL: x.shown,
		StatusCode: x.resp.StatusCode, Status: statusText(x.resp),
		Message: redact(msg, x.c.APIKey), Type: typ, Code: code,
	}
}

func statusText(r *http.Response) string {
	if r.Status != "" {
		return clip(r.Status)
	}
	return fmt.Sprintf("%d %s", r.StatusCode, http.StatusText(r.StatusCode))
}

// readAll reads the whole body within MaxResponseBytes.
func (x *exchange) readAll() ([]byte, error) {
	b, err := io.ReadAll(x.limited)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// mediaType returns the response's media type, lowercased.
func (x *exchange) mediaType() string {
	mt, _, _ := mime.ParseMediaType(x.resp.Header.Get("Content-Type"))
	return strings.ToLower(mt)
}

// countingReader enforces the size cap and keeps a stream's idle timer
// alive; its errors name the request.
type countingReader struct {
	r    io.Reader
	left int64
	x    *exchange
}

func (r *countingReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, fmt.Errorf("llm: %s %s: %w (over %d bytes)", r.x.method, r.x.shown, ErrResponseTooLarge, r.x.c.maxBytes())
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.r.Read(p)
	r.left -= int64(n)
	if n > 0 {
		r.x.touch()
	}
	if err != nil && err != io.EOF {
		err = r.x.fail(err)
	}
	if r.left <= 0 && err == nil {
		err = fmt.Errorf("llm: %s %s: %w (over %d bytes)", r.x.method, r.x.shown, ErrResponseTooLarge, r.x.c.maxBytes())
	}
	return n, err
}

// Chat sends a request and returns the response. Its errors: an
// *HTTPError for a status other than 2xx, a *ResponseError for a body that
// is not a chat-completions response, an error wrapping ErrResponseTooLarge,
// a *TimeoutError, the context's error, or a transport error.
func (c *Client) Chat(ctx context.Context, req *ChatRequest) (*ChatResponse, error) {
	body, err := req.body(c.Model, false)
	if err != nil {
		return nil, err
	}
	x, err := c.start(ctx, http.MethodPost, "/chat/completions", body, "", "application/json", false)
	if err != nil {
		return nil, err
	}
	defer x.close()
	raw, err := x.readAll()
	if err != nil {
		return nil, err
	}
	resp, err := decodeResponse(raw)
	if err != nil {
		return nil, fmt.Errorf("llm: %s %s: %w", x.method, x.shown, err)
	}
	return resp, nil
}

// Models lists the ids the endpoint serves (GET {BaseURL}/models).
func (c *Client) Models(ctx context.Context) ([]string, error) {
	x, err := c.start(ctx, http.MethodGet, "/models", nil, "", "application/json", false)
	if err != nil {
		return nil, err
	}
	defer x.close()
	raw, err := x.readAll()
	if err != nil {
		return nil, err
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("llm: %s %s: %w", x.method, x.shown, &ResponseError{Reason: "not a model list: " + err.Error()})
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}
