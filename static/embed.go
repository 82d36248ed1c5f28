// Package static embeds the CSS and scripts served under /static/.
// screenshots/ holds the pictures of the README and docs/walkthrough.md (made by
// `make screenshots`); they are not embedded or served.
package static

import "embed"

// FS holds css/, js/ and img/ (the favicon).
//
//go:embed css js img
var FS embed.FS
