package tools

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// encodeToolResults is the server's receiving middleware that hands the SDK
// each tools/call result wrapped in encodedToolResult, which encodes it in
// one pass instead of the SDK's several (see there). Everything else passes
// untouched.
func encodeToolResults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && err == nil {
			return encodedToolResult{r}, nil
		}
		return res, err
	}
}

// encodedToolResult is a tool result that encodes to the same bytes as
// (*mcp.CallToolResult).MarshalJSON, faster. The SDK's encoding marshals
// every text block on its own and then re-validates and re-compacts it at
// each level of nesting, and compacts the structured content twice; our
// results are text blocks and structured content that engine encoded
// compactly, so one pass that escapes the texts and checks the structured
// content gives the same bytes. Anything else in the result (_meta, a
// resultType the SDK set for a newer protocol, other content) goes
// through the SDK's own MarshalJSON. It embeds the result, so the SDK can
// still read and set its fields after the handler returned.
type encodedToolResult struct {
	*mcp.CallToolResult
}

// MarshalJSON encodes the result.
func (r encodedToolResult) MarshalJSON() ([]byte, error) {
	if b, ok := appendToolResult(nil, r.CallToolResult); ok {
		return b, nil
	}
	return r.CallToolResult.MarshalJSON()
}

// appendToolResult appends res as (*mcp.CallToolResult).MarshalJSON encodes
// it, or reports false when res holds anything but text blocks without
// metadata, structured content given as json.RawMessage, and isError.
func appendToolResult(dst []byte, res *mcp.CallToolResult) ([]byte, bool) {
	// The result's other members, as the SDK encodes them: with none set,
	// only content (here null) remains.
	rest := *res
	rest.Content, rest.StructuredContent, rest.IsError = nil, nil, false
	if env, err := rest.MarshalJSON(); err != nil || string(env) != `{"content":null}` {
		return nil, false
	}
	size := 64 + len(res.Content)*32
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok && t != nil {
			size += len(t.Text) + len(t.Text)/4 // room for some escapes
		}
	}
	if raw, ok := res.StructuredContent.(json.RawMessage); ok {
		size += len(raw) + len(raw)/16
	}
	dst = slices.Grow(dst, size)
	dst = append(dst, `{"content":`...)
	if res.Content == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, c := range res.Content {
			t, ok := c.(*mcp.TextContent)
			if !ok || t == nil || t.Meta != nil || t.Annotations != nil {
				return nil, false
			}
			if i > 0 {
				dst = append(dst, ',')
			}
			// json.Marshal escapes a string exactly as the SDK's
			// TextContent.MarshalJSON does (it calls json.Marshal), HTML
			// characters included.
			text, err := json.Marshal(t.Text)
			if err != nil {
				return nil, false
			}
			dst = append(dst, `{"type":"text","text":`...)
			dst = append(dst, text...)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if res.StructuredContent != nil {
		raw, ok := res.StructuredContent.(json.RawMessage)
		if !ok {
			return nil, false
		}
		dst = append(dst, `,"structuredContent":`...)
		if dst, ok = appendCompactHTML(dst, raw); !ok {
			return nil, false
		}
	}
	if res.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	return append(dst, '}'), true
}

// appendCompactHTML appends raw as encoding/json writes a json.RawMessage
// inside a value json.Marshal encodes: compacted, with <, >, &, U+2028 and
// U+2029 escaped. It reports false, for the SDK to encode it, when raw is
// empty or not compact already (whitespace outside strings). Whether raw is
// valid JSON is not checked here: the SDK's encoder checks the whole
// result.
func appendCompactHTML(dst, raw []byte) ([]byte, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	const hex = "0123456789abcdef"
	inString, escaped, start := false, false, 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if !compactHTMLSpecial[c] || escaped {
			escaped = false
			continue
		}
		switch c {
		case '"':
			inString = !inString
		case '\\':
			escaped = inString
		case ' ', '\t', '\n', '\r':
			if !inString {
				return nil, false
			}
		case '<', '>', '&':
			dst = append(append(dst, raw[start:i]...), '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			start = i + 1
		case 0xE2: // the first byte of U+2028 and U+2029, among others
			if i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8 {
				dst = append(append(dst, raw[start:i]...), '\\', 'u', '2', '0', '2', hex[raw[i+2]&0xF])
				i += 2
				start = i + 1
			}
		}
	}
	return append(dst, raw[start:]...), true
}

// compactHTMLSpecial marks the bytes appendCompactHTML looks at; it is
// never written.
var compactHTMLSpecial = [256]bool{'"': true, '\\': true, ' ': true, '\t': true, '\n': true, '\r': true, '<': true, '>': true, '&': true, 0xE2: true}
