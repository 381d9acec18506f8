package bedrock_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
)

// This file verifies SigV4 signatures without the AWS SDK: the canonical
// request, the string to sign and the derived key, written from the
// published algorithm, so a test can tell whether the client's signature is
// one AWS would accept.

func hmacSHA256(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// signature computes the SigV4 signature of a canonical request.
func signature(secret, date, region, service, amzDate, canonical string) string {
	scope := date + "/" + region + "/" + service + "/aws4_request"
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + sha256Hex([]byte(canonical))
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	k = hmacSHA256(k, "aws4_request")
	return hex.EncodeToString(hmacSHA256(k, toSign))
}

// uriEncode percent-encodes every byte but unreserved ones (and '/' when
// keepSlash), as SigV4 asks.
func uriEncode(s string, keepSlash bool) string {
	var b strings.Builder
	for i := range len(s) {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', strings.IndexByte("-_.~", c) >= 0,
			c == '/' && keepSlash:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// canonicalRequest is the canonical request of r as a server received it,
// over the signed headers named, for a body with the given hash. The path
// is encoded once more (every service but S3 does).
func canonicalRequest(r *http.Request, signed []string, bodyHash string) string {
	var q []string
	for k, vs := range r.URL.Query() {
		for _, v := range vs {
			q = append(q, uriEncode(k, false)+"="+uriEncode(v, false))
		}
	}
	sort.Strings(q)
	var h strings.Builder
	for _, name := range signed {
		var v string
		switch name {
		case "host":
			v = r.Host
		case "content-length":
			v = fmt.Sprint(r.ContentLength)
		default:
			v = strings.Join(r.Header.Values(name), ",")
		}
		h.WriteString(name + ":" + strings.Join(strings.Fields(v), " ") + "\n")
	}
	path := r.URL.EscapedPath()
	return strings.Join([]string{r.Method, uriEncode(path, true), strings.Join(q, "&"), h.String(),
		strings.Join(signed, ";"), bodyHash}, "\n")
}

// verifySigV4 checks r's Authorization header against the secret and
// returns why it does not match, or "".
func verifySigV4(r *http.Request, body []byte, accessKey, secret, region, service string) string {
	auth := r.Header.Get("Authorization")
	const prefix = "AWS4-HMAC-SHA256 "
	if !strings.HasPrefix(auth, prefix) {
		return "no AWS4-HMAC-SHA256 Authorization header: " + auth
	}
	fields := map[string]string{}
	for part := range strings.SplitSeq(strings.TrimPrefix(auth, prefix), ", ") {
		k, v, _ := strings.Cut(part, "=")
		fields[k] = v
	}
	amzDate := r.Header.Get("X-Amz-Date")
	if len(amzDate) != 16 {
		return "bad X-Amz-Date " + amzDate
	}
	date := amzDate[:8]
	wantCred := accessKey + "/" + date + "/" + region + "/" + service + "/aws4_request"
	if fields["Credential"] != wantCred {
		return fmt.Sprintf("credential %q, want %q", fields["Credential"], wantCred)
	}
	signed := strings.Split(fields["SignedHeaders"], ";")
	for _, must := range []string{"host", "x-amz-date"} {
		if !containsStr(signed, must) {
			return "SignedHeaders lacks " + must
		}
	}
	want := signature(secret, date, region, service, amzDate, canonicalRequest(r, signed, sha256Hex(body)))
	if fields["Signature"] != want {
		return fmt.Sprintf("signature %s, want %s", fields["Signature"], want)
	}
	return ""
}

func containsStr(list []string, s string) bool {
	return slices.Contains(list, s)
}

// The verifier reproduces the example of AWS's published SigV4 test suite
// (a GET with a repeated query parameter and a date header, signed with the
// documentation's example secret): the canonical request's hash and the
// signature are the documented ones.
func TestVerifierMatchesTheAWSExample(t *testing.T) {
	r := &http.Request{Method: http.MethodGet, Host: "host.foo.com", Header: http.Header{},
		URL: &url.URL{Path: "/", RawQuery: "foo=Zoo&foo=aha"}}
	r.Header.Set("Date", "Mon, 09 Sep 2011 23:36:00 GMT")
	creq := canonicalRequest(r, []string{"date", "host"}, sha256Hex(nil))
	want := "GET\n/\nfoo=Zoo&foo=aha\ndate:Mon, 09 Sep 2011 23:36:00 GMT\nhost:host.foo.com\n\ndate;host\n" +
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	if creq != want {
		t.Fatalf("canonical request\n%s\nwant\n%s", creq, want)
	}
	if h := sha256Hex([]byte(creq)); h != "e25f777ba161a0f1baf778a87faf057187cf5987f17953320e3ca399feb5f00d" {
		t.Fatalf("canonical request hash %s", h)
	}
	sig := signature("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20110909", "us-east-1", "host", "20110909T233600Z", creq)
	if sig != "be7148d34ebccdc6423b19085378aa0bee970bdc61d144bd1a8c48c33079ab09" {
		t.Fatalf("signature %s, want the documented be7148d3...", sig)
	}
}
