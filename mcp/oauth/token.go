package oauth

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
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Token endpoint client authentication methods (RFC 7591, section 2).
const (
	authNone  = "none"
	authBasic = "client_secret_basic"
	authPost  = "client_secret_post"
)

// client is how lcp identifies itself to an authorization server.
type client struct {
	id, secret string
	method     string // authNone, authBasic or authPost
}

// tokenResponse is a successful answer of a token endpoint (RFC 6749,
// section 5.1).
type tokenResponse struct {
	AccessToken  string          `json:"access_token"`
	TokenType    string          `json:"token_type"`
	ExpiresIn    json.RawMessage `json:"expires_in"`
	RefreshToken string          `json:"refresh_token"`
	Scope        string          `json:"scope"`
}

// TokenError is an error answer of a token endpoint (RFC 6749,
// section 5.2).
type TokenError struct {
	Status      int
	Code        string
	Description string
}

func (e *TokenError) Error() string {
	msg := fmt.Sprintf("the token endpoint answered %d", e.Status)
	if e.Code != "" {
		msg += ": " + e.Code
	}
	if e.Description != "" {
		msg += " (" + e.Description + ")"
	}
	return msg
}

// requestToken posts a token request and returns the new credentials'
// token part. The form is never part of an error: it holds codes,
// verifiers and secrets.
func requestToken(ctx context.Context, hc *http.Client, endpoint string, cl client, form url.Values, now time.Time) (*Credentials, error) {
	form = cloneValues(form)
	switch cl.method {
	case authPost:
		form.Set("client_id", cl.id)
		form.Set("client_secret", cl.secret)
	case authBasic, authJWT:
	default:
		form.Set("client_id", cl.id)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("token endpoint %q: %w", endpoint, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if cl.method == authBasic {
		// RFC 6749, section 2.3.1: both parts form-encoded first.
		req.SetBasicAuth(url.QueryEscape(cl.id), url.QueryEscape(cl.secret))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("token request: %w", redactURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes))
	if err != nil {
		return nil, fmt.Errorf("reading the token response: %w", err)
	}
	return parseTokenResponse(resp.StatusCode, resp.Header.Get("Content-Type"), body, now)
}

// parseTokenResponse reads the answer of a token endpoint. Its errors
// never quote the body.
func parseTokenResponse(status int, contentType string, body []byte, now time.Time) (*Credentials, error) {
	if status != http.StatusOK {
		te := &TokenError{Status: status}
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(body, &e) == nil {
			te.Code, te.Description = clean(e.Error), clean(e.Description)
		}
		return nil, te
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return nil, fmt.Errorf("the token endpoint answered %q, not JSON", clean(contentType))
	}
	var tr tokenResponse
	if err := json.Unmarshal(body, &tr); err != nil {
		return nil, fmt.Errorf("the token response is not valid JSON")
	}
	if tr.AccessToken == "" {
		return nil, fmt.Errorf("the token response has no access_token")
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer") {
		return nil, fmt.Errorf("the token endpoint issued a %q token; lcp sends bearer tokens only", clean(tr.TokenType))
	}
	c := &Credentials{AccessToken: tr.AccessToken, RefreshToken: tr.RefreshToken}
	if secs := expiresIn(tr.ExpiresIn); secs > 0 {
		c.Expiry = now.Add(time.Duration(secs) * time.Second)
	}
	if tr.Scope != "" {
		c.Scopes = strings.Fields(tr.Scope)
	}
	return c, nil
}

// expiresIn reads expires_in, which some servers send as a string.
func expiresIn(raw json.RawMessage) int64 {
	s := strings.Trim(string(bytes.TrimSpace(raw)), `"`)
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= 0 || n > 1<<40 {
		return 0
	}
	return int64(n)
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v)+2)
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// redactURLError drops the URL of a transport error (it may carry
// parameters); the endpoint is named by the caller.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// register registers lcp with the authorization server (RFC 7591) as a
// native application with a loopback redirect URI. The SDK's types are
// the wire format; the request is made here so that no error can ever
// quote the response, which holds the client secret.
func register(ctx context.Context, hc *http.Client, endpoint string, meta *oauthex.ClientRegistrationMetadata) (*oauthex.ClientRegistrationResponse, error) {
	payload, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("registration endpoint %q: %w", endpoint, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("registering the client: %w", redactURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes))
	if err != nil {
		return nil, fmt.Errorf("reading the registration response: %w", err)
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		msg := fmt.Sprintf("the registration endpoint %s answered %d %s", endpoint, resp.StatusCode, http.StatusText(resp.StatusCode))
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			msg += ": " + clean(e.Error)
			if e.Description != "" {
				msg += " (" + clean(e.Description) + ")"
			}
		}
		return nil, &registrationError{status: resp.StatusCode, msg: msg}
	}
	var reg oauthex.ClientRegistrationResponse
	if err := json.Unmarshal(body, &reg); err != nil {
		return nil, fmt.Errorf("the registration response of %s is not valid JSON", endpoint)
	}
	if reg.ClientID == "" {
		return nil, fmt.Errorf("the registration response of %s has no client_id", endpoint)
	}
	return &reg, nil
}

type registrationError struct {
	status int
	msg    string
}

func (e *registrationError) Error() string { return e.msg }
