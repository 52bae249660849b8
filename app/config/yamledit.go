package config

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"tollgate/app/home"

	"gopkg.in/yaml.v3"
)

// editYAML applies edits to a YAML file at the node level, so comments, key
// spelling (pricePerMTokens) and keys tollgate does not know survive; viper's
// own writer lower-cases keys and drops comments. The file is replaced
// atomically: a failed edit leaves it as it was.
func editYAML(file string, edit func(root *yaml.Node) error) error {
	src, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("reading %s: %w", file, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return fmt.Errorf("parsing %s: %w", file, err)
	}
	if doc.Kind == 0 { // empty file
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return fmt.Errorf("%s: the top level must be a map of keys", file)
	}
	if err := edit(doc.Content[0]); err != nil {
		return err
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return fmt.Errorf("encoding %s: %w", file, err)
	}
	enc.Close()
	return home.WriteFileAtomic(file, out.Bytes(), 0o600)
}

// mapChild finds key in a mapping node, matching case-insensitively (viper
// folds case, so `pricepermtokens` and `pricePerMTokens` are one key), and
// creates it with the given spelling when absent and create is set.
func mapChild(m *yaml.Node, key string, create bool) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if strings.EqualFold(m.Content[i].Value, key) {
			return m.Content[i+1]
		}
	}
	if !create {
		return nil
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, k, v)
	return v
}

// setPath sets the scalar at path (creating maps on the way), keeping the
// comments attached to an existing node.
func setPath(root *yaml.Node, path []string, value any) error {
	node := root
	for i, key := range path {
		if node.Kind != yaml.MappingNode {
			if node.Kind == yaml.ScalarNode && node.Value == "" || node.Tag == "!!null" {
				node.Kind, node.Tag, node.Value = yaml.MappingNode, "!!map", ""
			} else {
				return fmt.Errorf("%s is not a map", strings.Join(path[:i], "."))
			}
		}
		if i == len(path)-1 {
			child := mapChild(node, key, false)
			if child == nil {
				node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, &yaml.Node{})
				child = node.Content[len(node.Content)-1]
			}
			return setScalar(child, value)
		}
		node = mapChild(node, key, true)
	}
	return nil
}

func setScalar(n *yaml.Node, value any) error {
	if value == nil {
		n.Kind, n.Tag, n.Value, n.Content = yaml.ScalarNode, "!!null", "null", nil
		return nil
	}
	// Structured values (offPeak) are encoded fresh; their old comments go.
	switch value.(type) {
	case map[string]any, []any, []string:
		var fresh yaml.Node
		if err := fresh.Encode(value); err != nil {
			return err
		}
		head, line := n.HeadComment, n.LineComment
		*n = fresh
		n.HeadComment, n.LineComment = head, line
		return nil
	}
	n.Kind, n.Content, n.Style = yaml.ScalarNode, nil, 0
	switch v := value.(type) {
	case string:
		n.Tag, n.Value = "!!str", v
	case bool:
		n.Tag, n.Value = "!!bool", strconv.FormatBool(v)
	case int:
		n.Tag, n.Value = "!!int", strconv.Itoa(v)
	case int64:
		n.Tag, n.Value = "!!int", strconv.FormatInt(v, 10)
	case float64:
		n.Tag, n.Value = "!!float", strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.ContainsAny(n.Value, ".eE") {
			n.Tag = "!!int"
		}
	default:
		return fmt.Errorf("cannot write %T to YAML", value)
	}
	return nil
}

// deletePath removes the key at path if present.
func deletePath(root *yaml.Node, path []string) {
	node := root
	for i, key := range path {
		if node == nil || node.Kind != yaml.MappingNode {
			return
		}
		if i == len(path)-1 {
			for j := 0; j+1 < len(node.Content); j += 2 {
				if strings.EqualFold(node.Content[j].Value, key) {
					node.Content = append(node.Content[:j], node.Content[j+2:]...)
					return
				}
			}
			return
		}
		node = mapChild(node, key, false)
	}
}
