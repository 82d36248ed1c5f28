// Package static embeds the CSS and scripts served under /static/.
// screenshots/ holds the README's pictures of the hosted page (made by
// `make screenshots`); they are not embedded or served.
package static

import "embed"

// FS holds css/, js/ and img/ (the favicon).
//
//go:embed css js img
var FS embed.FS
