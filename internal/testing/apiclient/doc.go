// Package apiclient is a Go client of the fundsource API generated from its
// OpenAPI document (web/api/openapi.json) by oapi-codegen, pinned as a go
// tool in go.mod. It is what a merchant gets by running the generator on
// the served document (GET /v2/openapi.json); the web tests regenerate it
// from the served document, require the result to equal this package, and
// run a verification flow through it. Regenerate after changing the
// document:
//
//	go generate ./internal/testing/apiclient
package apiclient

//go:generate go tool oapi-codegen -generate types,client -package apiclient -o client.gen.go ../../../web/api/openapi.json
