package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// registry is the repository's server.json, the MCP registry's entry for
// scratchpad-mcp: the one place its registry name, description and
// repository are written, which the packages copy.
type registry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Repository  struct {
		URL    string `json:"url"`
		Source string `json:"source"`
	} `json:"repository"`
	raw map[string]any // the whole document, for dist/server.json
}

// readRegistry reads root/server.json.
func readRegistry(root string) (*registry, error) {
	b, err := os.ReadFile(filepath.Join(root, "server.json"))
	if err != nil {
		return nil, err
	}
	var r registry
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("server.json: %w", err)
	}
	if err := json.Unmarshal(b, &r.raw); err != nil {
		return nil, fmt.Errorf("server.json: %w", err)
	}
	if r.Name == "" || r.Description == "" || r.Repository.URL == "" {
		return nil, fmt.Errorf("server.json: name, description and repository.url are needed")
	}
	return &r, nil
}

// repository is package.json's repository field.
func (r *registry) repository() map[string]string {
	return map[string]string{"type": "git", "url": "git+" + r.Repository.URL + ".git"}
}

// releaseURL is where a release's file is downloaded from.
func (r *registry) releaseURL(version, file string) string {
	return fmt.Sprintf("%s/releases/download/%s/%s", r.Repository.URL, version, file)
}

// writeServerJSON writes dir/server.json: the repository's, at version,
// with an mcpb package per bundle (its release URL and SHA-256, which the
// registry checks) after the npm one.
func writeServerJSON(o options, r *registry, bundles []string, dir string) (string, error) {
	doc := map[string]any{}
	for k, v := range r.raw {
		doc[k] = v
	}
	ver := npmVersion(o.version)
	doc["version"] = ver
	var pkgs []any
	if old, ok := doc["packages"].([]any); ok {
		for _, p := range old {
			if m, ok := p.(map[string]any); ok && m["registryType"] == "npm" {
				c := map[string]any{}
				for k, v := range m {
					c[k] = v
				}
				c["version"] = ver
				pkgs = append(pkgs, c)
			}
		}
	}
	for _, b := range bundles {
		data, err := os.ReadFile(b)
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(data)
		pkgs = append(pkgs, map[string]any{
			"registryType": "mcpb",
			"identifier":   r.releaseURL(o.version, filepath.Base(b)),
			"version":      ver,
			"fileSha256":   hex.EncodeToString(sum[:]),
			"transport":    map[string]string{"type": "stdio"},
		})
	}
	doc["packages"] = pkgs
	out, err := marshal(doc)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "server.json")
	return path, os.WriteFile(path, out, 0o644)
}
