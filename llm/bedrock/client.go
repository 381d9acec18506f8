package bedrock

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/anthropic"
	"github.com/agentfleet/agentfleet/llm/internal/adapterkit"
)

// ProviderName names this adapter in errors and metrics.
const ProviderName = "bedrock"

// signingService is the SigV4 service name of the Bedrock runtime.
const signingService = "bedrock"

// Client speaks to Anthropic models on the Bedrock runtime. It is safe for
// concurrent use.
type Client struct {
	cfg    Config
	http   llm.HTTPConfig
	signer *v4.Signer
	enc    anthropic.Encoder
}

var _ llm.Client = (*Client)(nil)

// New returns a client for cfg after applying defaults and validating it.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	return &Client{cfg: cfg, signer: v4.NewSigner(),
		http: llm.HTTPConfig{Provider: ProviderName, Client: cfg.HTTPClient, Retry: cfg.Retry, Classify: classify}}, nil
}

// Complete calls InvokeModel and returns the whole answer.
func (c *Client) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	resp, err := c.send(ctx, req, false) //nolint:bodyclose // ReadResponse or YieldStream closes it
	if err != nil {
		return nil, err
	}
	out, err := adapterkit.ReadResponse(ProviderName, resp, anthropic.ParseResponse)
	if err != nil {
		return nil, err
	}
	out, err = adapterkit.Answer(ProviderName, req, true, out)
	return out, llm.WithRequestID(err, resp.Header)
}

// Stream calls InvokeModelWithResponseStream and yields events as chunks
// arrive, ending with EventFinish or an error.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		resp, err := c.send(ctx, req, true) //nolint:bodyclose // ReadResponse or YieldStream closes it
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		adapterkit.YieldStream(resp, checkEventStream, adapterkit.AnswerDecode(ProviderName, req, true, DecodeStream), yield)
	}
}

// checkEventStream refuses a streamed answer that is not AWS's event stream.
func checkEventStream(resp *http.Response) error {
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, eventStreamType) {
		return &llm.Error{Kind: llm.ErrInvalidResponse, Provider: ProviderName,
			Message: fmt.Sprintf("the stream answered Content-Type %q, not %s", ct, eventStreamType)}
	}
	return nil
}

const eventStreamType = "application/vnd.amazon.eventstream"

// send encodes, signs and sends req, with llm's retries; each attempt is
// signed afresh.
func (c *Client) send(ctx context.Context, req llm.Request, stream bool) (*http.Response, error) {
	body, err := c.body(req)
	if err != nil {
		return nil, err
	}
	url := c.cfg.BaseURL + "/model/" + escapeModel(req.Model) + "/invoke"
	accept := "application/json"
	if stream {
		url += "-with-response-stream"
		accept = eventStreamType
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	return llm.Send(ctx, c.http, func(ctx context.Context) (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", accept)
		llm.AddExtraHeaders(r)
		creds, err := c.cfg.Credentials.Retrieve(ctx)
		if err != nil {
			return nil, &llm.Error{Kind: llm.ErrAuthentication, Provider: ProviderName, Message: err.Error()}
		}
		if err := c.signer.SignHTTP(ctx, creds, r, hash, signingService, c.cfg.Region, c.cfg.Now()); err != nil {
			return nil, &llm.Error{Kind: llm.ErrAuthentication, Provider: ProviderName, Message: "signing: " + err.Error()}
		}
		return r, nil
	})
}

// body is the Messages API body reshaped for Bedrock: no model (it is in
// the path) and no stream (the operation says it), anthropic_version
// bedrock-2023-05-31, and the beta names in anthropic_beta instead of a
// header.
func (c *Client) body(req llm.Request) ([]byte, error) {
	if req.Model == "" {
		return nil, &llm.Error{Kind: llm.ErrInvalidRequest, Provider: ProviderName,
			Message: "the request names no model: give a Bedrock model id such as anthropic.claude-sonnet-4-20250514-v1:0"}
	}
	raw, betas, err := c.enc.Encode(req, false)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, &llm.Error{Kind: llm.ErrInvalidRequest, Provider: ProviderName, Message: "re-encoding the body: " + err.Error()}
	}
	delete(m, "model")
	delete(m, "stream")
	m["anthropic_version"] = json.RawMessage(`"` + AnthropicVersion + `"`)
	if len(betas) > 0 {
		b, _ := json.Marshal(betas)
		m["anthropic_beta"] = b
	}
	return json.Marshal(m)
}

// escapeModel escapes a model id for the path as the AWS SDK does: every
// byte but letters, digits and -._~ is percent-encoded (the ':' of
// "...-v1:0" becomes %3A, and SigV4 encodes the path once more).
func escapeModel(id string) string {
	var b strings.Builder
	for i := range len(id) {
		ch := id[i]
		if ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || strings.IndexByte("-._~", ch) >= 0 {
			b.WriteByte(ch)
		} else {
			fmt.Fprintf(&b, "%%%02X", ch)
		}
	}
	return b.String()
}

// chunk is the payload of a "chunk" event: the bytes of one Messages API
// stream event, base64-encoded.
type chunk struct {
	Bytes []byte `json:"bytes"`
}

// DecodeStream reads an InvokeModelWithResponseStream body: event stream
// messages whose "chunk" events each carry one Messages API stream event,
// and whose exceptions end the stream with a classified error. It yields
// unified events, ending with EventFinish or an error.
func DecodeStream(body io.Reader, yield func(llm.StreamEvent, error) bool) {
	r := bufio.NewReader(body)
	dec := anthropic.NewEventDecoder()
	for {
		msg, err := ReadMessage(r)
		if err != nil {
			yield(llm.StreamEvent{}, streamReadError(err))
			return
		}
		done, err := handleMessage(msg, dec, yield)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		if done < 0 {
			return // the consumer stopped
		}
		if done > 0 {
			out, resp := dec.Finish()
			for _, ev := range out {
				if !yield(ev, nil) {
					return
				}
			}
			yield(llm.StreamEvent{Kind: llm.EventFinish, Response: resp}, nil)
			return
		}
	}
}

// handleMessage feeds one message to dec and yields what it produced:
// done is 1 at message_stop, -1 when yield returned false, else 0.
func handleMessage(msg Message, dec *anthropic.EventDecoder, yield func(llm.StreamEvent, error) bool) (int, error) {
	switch msg.String(":message-type") {
	case "exception":
		return 0, exceptionError(msg.String(":exception-type"), msg.Payload)
	case "error":
		return 0, exceptionError(msg.String(":error-code"), []byte(`{"message":`+quote(msg.String(":error-message"))+`}`))
	case "event":
	default:
		return 0, nil
	}
	if msg.String(":event-type") != "chunk" {
		return 0, nil // initial-response and event types added later
	}
	var ch chunk
	if err := json.Unmarshal(msg.Payload, &ch); err != nil {
		return 0, &llm.Error{Kind: llm.ErrInvalidResponse, Provider: ProviderName, Message: "a chunk is not {\"bytes\": base64}: " + err.Error()}
	}
	out, done, err := dec.Feed(ch.Bytes)
	for _, ev := range out {
		if !yield(ev, nil) {
			return -1, nil
		}
	}
	if err != nil {
		return 0, err
	}
	if done {
		return 1, nil
	}
	return 0, nil
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// streamReadError classifies a failed read: a clean end or a cut before
// message_stop is an interrupted stream, a bad frame an invalid response.
func streamReadError(err error) *llm.Error {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &llm.Error{Kind: llm.ErrStreamInterrupted, Provider: ProviderName,
			Message: "the stream ended before message_stop; the answer is incomplete"}
	case errors.Is(err, ErrFrame):
		return &llm.Error{Kind: llm.ErrInvalidResponse, Provider: ProviderName, Message: err.Error()}
	}
	return llm.ReadError(ProviderName, err)
}
