package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

func pemOf(t *testing.T, key any) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

func TestClientAssertion(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rs, _ := rsa.GenerateKey(rand.Reader, 2048)
	now := time.Unix(1_800_000_000, 0)
	for _, c := range []struct {
		key    any
		alg    string
		want   string
		verify func(digest, sig []byte) bool
	}{
		{ec, "", "ES256", func(d, s []byte) bool {
			return len(s) == 64 && ecdsa.Verify(&ec.PublicKey, d, new(big.Int).SetBytes(s[:32]), new(big.Int).SetBytes(s[32:]))
		}},
		{rs, "", "RS256", func(d, s []byte) bool { return rsa.VerifyPKCS1v15(&rs.PublicKey, crypto.SHA256, d, s) == nil }},
		{rs, "PS256", "PS256", func(d, s []byte) bool { return rsa.VerifyPSS(&rs.PublicKey, crypto.SHA256, d, s, nil) == nil }},
	} {
		k, err := parseSigningKey(pemOf(t, c.key), c.alg)
		if err != nil {
			t.Fatal(err)
		}
		jwt, err := k.assertion("bot", "https://auth.example", now)
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(jwt, ".")
		if len(parts) != 3 {
			t.Fatalf("%s: %d parts", c.want, len(parts))
		}
		var header map[string]string
		var claims map[string]any
		hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
		cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		if json.Unmarshal(hb, &header) != nil || json.Unmarshal(cb, &claims) != nil {
			t.Fatalf("%s: undecodable %q", c.want, jwt)
		}
		if header["alg"] != c.want || claims["iss"] != "bot" || claims["sub"] != "bot" || claims["aud"] != "https://auth.example" || claims["exp"].(float64) != float64(now.Add(5*time.Minute).Unix()) || claims["jti"] == "" {
			t.Errorf("%s: header %v claims %v", c.want, header, claims)
		}
		digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		if !c.verify(digest[:], sig) {
			t.Errorf("%s: the signature does not verify", c.want)
		}
	}
}

func TestSigningKeyErrors(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for _, c := range []struct{ pem, alg, want string }{
		{"not pem", "", "not PEM"},
		{"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "", "cannot be read"},
		{pemOf(t, ec), "RS256", "does not go with this EC key"},
	} {
		_, err := parseSigningKey(c.pem, c.alg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}
