package web

import (
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

// OpenAPI is the OpenAPI 3 document of the API, served at /v2/openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

func (s *server) openAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/json; charset=utf-8", OpenAPI)
}
