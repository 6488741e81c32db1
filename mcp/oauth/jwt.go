package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// authJWT is client authentication with a signed assertion (RFC 7523,
// private_key_jwt).
const authJWT = "private_key_jwt"

// assertionType is the client_assertion_type of a JWT assertion.
const assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// signingKey is a private key and the JWS algorithm it signs with.
type signingKey struct {
	key crypto.Signer
	alg string
}

// parseSigningKey reads a PEM private key (PKCS #8, SEC 1 EC or PKCS #1
// RSA) and checks alg against it; an empty alg is the key's usual one
// (ES256 for P-256, ES384 for P-384, RS256 for RSA).
func parseSigningKey(pemText, alg string) (*signingKey, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, errors.New("the private key is not PEM")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		// The error of x509 describes the structure, never the key.
		return nil, fmt.Errorf("the private key cannot be read: %w", err)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		want := map[elliptic.Curve]string{elliptic.P256(): "ES256", elliptic.P384(): "ES384", elliptic.P521(): "ES512"}[k.Curve]
		if want == "" {
			return nil, errors.New("the EC private key is not on P-256, P-384 or P-521")
		}
		if alg == "" {
			alg = want
		}
		if alg != want {
			return nil, fmt.Errorf("signing_algorithm %s does not go with this EC key (%s does)", alg, want)
		}
		return &signingKey{key: k, alg: alg}, nil
	case *rsa.PrivateKey:
		if alg == "" {
			alg = "RS256"
		}
		switch alg {
		case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
		default:
			return nil, fmt.Errorf("signing_algorithm %s does not go with an RSA key", alg)
		}
		return &signingKey{key: k, alg: alg}, nil
	}
	return nil, fmt.Errorf("unsupported private key type %T (want EC or RSA)", key)
}

// assertion returns a client assertion for clientID, for the authorization
// server whose issuer is audience, valid for five minutes.
func (s *signingKey) assertion(clientID, audience string, now time.Time) (string, error) {
	header, _ := json.Marshal(map[string]string{"alg": s.alg, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{
		"iss": clientID, "sub": clientID, "aud": audience,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": rand.Text(),
	})
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	var hash crypto.Hash
	switch s.alg[2:] {
	case "256":
		hash = crypto.SHA256
	case "384":
		hash = crypto.SHA384
	default:
		hash = crypto.SHA512
	}
	h := hash.New()
	h.Write([]byte(input))
	digest := h.Sum(nil)
	var sig []byte
	var err error
	switch k := s.key.(type) {
	case *ecdsa.PrivateKey:
		var der []byte
		if der, err = ecdsa.SignASN1(rand.Reader, k, digest); err == nil {
			sig, err = rawECDSA(der, (k.Curve.Params().BitSize+7)/8)
		}
	case *rsa.PrivateKey:
		if s.alg[0] == 'P' {
			sig, err = rsa.SignPSS(rand.Reader, k, hash, digest, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		} else {
			sig, err = rsa.SignPKCS1v15(rand.Reader, k, hash, digest)
		}
	}
	if err != nil {
		return "", fmt.Errorf("signing the client assertion: %w", err)
	}
	return input + "." + enc.EncodeToString(sig), nil
}

// rawECDSA turns an ASN.1 ECDSA signature into the r||s form of JWS.
func rawECDSA(der []byte, size int) ([]byte, error) {
	var rs struct{ R, S *big.Int }
	if _, err := asn1.Unmarshal(der, &rs); err != nil {
		return nil, err
	}
	out := make([]byte, 2*size)
	rs.R.FillBytes(out[:size])
	rs.S.FillBytes(out[size:])
	return out, nil
}
