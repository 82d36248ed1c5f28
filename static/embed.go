// Package static embeds the CSS, scripts and images served under /static/.
package static

import "embed"

// FS holds css/, js/ and img/.
//
//go:embed css js
var FS embed.FS
