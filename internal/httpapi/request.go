package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/stockguard/stockguard/internal/inventory"
)

// maxUserIDBytes bounds the sub claim stored in keys: OpenID Connect Core 1.0 §2 says
// sub "MUST NOT exceed 255 ASCII characters in length".
const maxUserIDBytes = 255

// maxNameInMessage bounds a field name quoted back to the client in an error message.
const maxNameInMessage = 32

// UserID reads the caller from the JWT authorizer's sub claim (docs/contract.md, "Conventions"):
// 1-255 bytes of valid UTF-8 without control characters. A request without one is
// answered 401 UNAUTHORIZED by Answer.
func UserID(req events.APIGatewayV2HTTPRequest) (string, error) {
	return Claim(req, "sub")
}

// Claim reads the JWT authorizer's claim name with UserID's rules (e.g. the buyer's
// openid when an outside issuer carries it in a claim of its own). A request without
// it is answered 401 UNAUTHORIZED by Answer.
func Claim(req events.APIGatewayV2HTTPRequest, name string) (string, error) {
	auth := req.RequestContext.Authorizer
	if auth == nil || auth.JWT == nil {
		return "", ErrUnauthorized
	}
	sub := auth.JWT.Claims[name]
	if !validUserID(sub) {
		return "", ErrUnauthorized
	}
	return sub, nil
}

// validUserID reports whether id follows UserID's rule: 1-255 bytes of valid UTF-8
// without control characters.
func validUserID(id string) bool {
	if id == "" || len(id) > maxUserIDBytes || !utf8.ValidString(id) {
		return false
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// ErrBodyTooLarge is the cause of Body's refusal of a body over the route's limit.
var ErrBodyTooLarge = errors.New("request body too large")

// Body returns the raw request body, decoding API Gateway's base64 form. It refuses one
// longer than maxBytes once decoded with a *Failure wrapping ErrBodyTooLarge, answered
// 413 PAYLOAD_TOO_LARGE ("body must not exceed N bytes"; RFC 9110 §15.5.14: the server
// refuses content larger than it will process), and refuses with an
// *inventory.InvalidRequestError one that is not valid base64 or not valid UTF-8: every
// body read here is JSON, which is UTF-8 (RFC 8259 §8.1), and encoding/json would
// silently turn invalid bytes into U+FFFD. Each route's limit is far below the HTTP
// API's own payload quota (10 MB, "Quotas for configuring and running an HTTP API in
// API Gateway", https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html),
// above which API Gateway answers 413 itself.
func Body(req events.APIGatewayV2HTTPRequest, maxBytes int) ([]byte, error) {
	if len(req.Body) > base64.StdEncoding.EncodedLen(maxBytes) {
		return nil, bodyTooLarge(maxBytes)
	}
	body := []byte(req.Body)
	if req.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(req.Body); err != nil {
			return nil, inventory.InvalidError("body is not valid base64")
		}
	}
	if len(body) > maxBytes {
		return nil, bodyTooLarge(maxBytes)
	}
	if !utf8.Valid(body) {
		return nil, inventory.InvalidError("body must be UTF-8 text: it holds bytes that are not valid UTF-8")
	}
	if loneSurrogate(body) {
		return nil, inventory.InvalidError(`body must be UTF-8 text: it holds a \u escape of half a UTF-16 surrogate pair`)
	}
	return body, nil
}

// bodyTooLarge is Body's refusal of a body over maxBytes.
func bodyTooLarge(maxBytes int) error {
	return &Failure{Status: http.StatusRequestEntityTooLarge, Code: "PAYLOAD_TOO_LARGE",
		Message: fmt.Sprintf("body must not exceed %d bytes", maxBytes), Err: ErrBodyTooLarge}
}

// loneSurrogate reports whether JSON text body escapes half a UTF-16 surrogate pair
// (\uD800–\uDFFF not in a high-low pair), which names no character (RFC 8259 §8.2)
// and which encoding/json would silently turn into U+FFFD. A backslash appears only
// inside strings in valid JSON, and invalid JSON is the decoder's to refuse.
func loneSurrogate(body []byte) bool {
	code := func(i int) rune { // the \u escape at body[i:], or -1
		if i+6 > len(body) || body[i] != '\\' || body[i+1] != 'u' {
			return -1
		}
		n, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 16)
		if err != nil {
			return -1
		}
		return rune(n)
	}
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' {
			continue
		}
		r := code(i)
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if low := code(i + 6); low < 0xDC00 || low > 0xDFFF {
				return true
			}
			i += 11
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		default:
			i++ // the escaped character, so that \\u is not read as an escape
		}
	}
	return false
}

// OnlyFields requires fields to hold exactly the names given, all of them; it returns
// an *inventory.InvalidRequestError naming the first unknown or missing field.
func OnlyFields(fields map[string]json.RawMessage, names ...string) error {
	for name := range fields {
		if !slices.Contains(names, name) {
			return inventory.InvalidError("unknown field %q", truncate(name, maxNameInMessage))
		}
	}
	for _, name := range names {
		if _, ok := fields[name]; !ok {
			return inventory.InvalidError("missing field %q", name)
		}
	}
	return nil
}

// DecodeStrict decodes exactly one JSON value (no trailing data) into v; JSON null is
// rejected so that a missing value cannot pass as a zero. Its errors are for the log
// only; callers answer with their own *inventory.InvalidRequestError.
func DecodeStrict(data []byte, v any) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return errors.New("null")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data")
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// NoDuplicateKeys rejects, with an *inventory.InvalidRequestError, a JSON document in
// which an object names a key twice: encoding/json would silently keep the last
// value, while a proxy or log reader may keep the first, so the request would mean two
// things. Invalid JSON is refused too.
func NoDuplicateKeys(data []byte) error {
	type frame struct {
		keys      map[string]bool // nil for an array
		expectKey bool
	}
	var stack []*frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].keys != nil {
			stack[n-1].expectKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return inventory.InvalidError("body is not valid JSON")
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &frame{keys: map[string]bool{}, expectKey: true})
			case '[':
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			if n := len(stack); n > 0 && stack[n-1].keys != nil && stack[n-1].expectKey {
				if stack[n-1].keys[t] {
					return inventory.InvalidError("field %q appears twice", truncate(t, maxNameInMessage))
				}
				stack[n-1].keys[t] = true
				stack[n-1].expectKey = false
				continue
			}
			valueDone()
		default:
			valueDone()
		}
	}
}
