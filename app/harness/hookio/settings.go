package hookio

// EditHandlers walks one event's groups of a hooks settings file — the
// shape Claude Code's settings.json and Codex's hooks.json share:
// [{"matcher": …, "hooks": [handler, …]}, …]. edit returns each handler's
// replacement, or false to drop it. A group not of that shape is kept as it
// is; a group whose handlers were all dropped goes.
func EditHandlers(groups []any, edit func(handler any) (any, bool)) []any {
	var kept []any
	for _, g := range groups {
		group, _ := g.(map[string]any)
		list, ok := group["hooks"].([]any)
		if !ok {
			kept = append(kept, g)
			continue
		}
		var rest []any
		for _, h := range list {
			if r, ok := edit(h); ok {
				rest = append(rest, r)
			}
		}
		if len(rest) == 0 && len(list) > 0 {
			continue
		}
		group["hooks"] = rest
		kept = append(kept, group)
	}
	return kept
}
