package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// ErrNotDiscover is returned by [ParseDiscover] for a result that is not a
// server/discover result.
var ErrNotDiscover = errors.New("not a server/discover result")

// Discover is a server/discover result (go-sdk v1.8.0 DiscoverResult) without
// the envelope members [Stamp] writes (resultType, _meta serverInfo, ttlMs,
// cacheScope).
type Discover struct {
	SupportedVersions []string
	// Capabilities is the ServerCapabilities object.
	Capabilities json.RawMessage
	Instructions string
	// ServerInfo is _meta's serverInfo as read by [ParseDiscover].
	ServerInfo json.RawMessage
}

// EncodeDiscover is d as a result object; [Stamp] it with resultType
// "complete", serverInfo and a [Cache] before sending.
func EncodeDiscover(d Discover) ([]byte, error) {
	if d.Capabilities == nil {
		d.Capabilities = json.RawMessage("{}")
	}
	if !isObject(d.Capabilities) || !json.Valid(d.Capabilities) {
		return nil, fmt.Errorf("%w: capabilities is not an object", ErrNotDiscover)
	}
	if d.SupportedVersions == nil {
		d.SupportedVersions = []string{}
	}
	return json.Marshal(struct {
		Supported    []string        `json:"supportedVersions"`
		Capabilities json.RawMessage `json:"capabilities"`
		Instructions string          `json:"instructions,omitempty"`
	}{d.SupportedVersions, d.Capabilities, d.Instructions})
}

// ParseDiscover reads an upstream's server/discover result: supportedVersions
// a list of strings and capabilities an object are required.
func ParseDiscover(raw []byte) (Discover, error) {
	var r struct {
		Supported    []string                   `json:"supportedVersions"`
		Capabilities json.RawMessage            `json:"capabilities"`
		Instructions string                     `json:"instructions"`
		Meta         map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return Discover{}, fmt.Errorf("%w: %v", ErrNotDiscover, err)
	}
	if r.Supported == nil || !isObject(r.Capabilities) {
		return Discover{}, fmt.Errorf("%w: supportedVersions or capabilities missing", ErrNotDiscover)
	}
	return Discover{SupportedVersions: r.Supported, Capabilities: r.Capabilities,
		Instructions: r.Instructions, ServerInfo: r.Meta[MetaServerInfo]}, nil
}

// Speaks20260728 reports whether a discover result offers [Revision20260728].
func (d Discover) Speaks20260728() bool {
	return slices.Contains(d.SupportedVersions, Revision20260728)
}
