package dashboard

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/fundsource/fundsource/internal/core/errs"
	"github.com/fundsource/fundsource/internal/merchant"
	"github.com/fundsource/fundsource/templates/components"
	view "github.com/fundsource/fundsource/templates/dashboard"
	"github.com/fundsource/fundsource/web/surface"
)

// brandPath is the Settings form that sets the hosted page's brand.
const brandPath = "/dashboard/settings/brand"

// maxBrandBody bounds the brand form's body: the fields and a logo well
// past merchant.MaxLogoBytes, so a logo somewhat too large is read whole
// and refused with its size named, rather than cut off.
const maxBrandBody = 1 << 20

// A merchant may upload logoUploadsPerWindow logos per logoUploadWindow,
// refused or not: each costs a decode. The allowance is this process's
// (like the sign-in limits), because what it protects is this process's
// CPU; behind N processes a merchant gets at most N times it.
const (
	logoUploadWindow     = time.Hour
	logoUploadsPerWindow = 10
)

// setBrand stores the display name, accent and logo from the Settings
// form. Every part is checked before anything is written; a refusal shows
// the form again with the typed values and the reason.
func (s *Surface) setBrand(c *gin.Context) {
	ctx, in := c.Request.Context(), current(c)
	if err := c.Request.ParseMultipartForm(maxBrandBody); err != nil {
		// Nothing typed can be shown again: the form shows what is stored.
		var tooLarge *http.MaxBytesError
		status, msg := http.StatusBadRequest, "The form could not be read. Choose the logo again and save."
		if errors.As(err, &tooLarge) {
			status, msg = http.StatusRequestEntityTooLarge, fmt.Sprintf("The logo must be at most %d KB.", merchant.MaxLogoBytes>>10)
		}
		stored, berr := s.merchants.Brand(ctx, in.Merchant.ID)
		if berr != nil {
			s.Fail(c, berr)
			return
		}
		s.Resolve(c, errs.Invalid("logo", msg))
		s.renderSettings(c, status, view.Settings{BrandName: stored.DisplayName, BrandAccent: stored.Accent, BrandError: msg, BrandField: "logo"})
		return
	}
	defer c.Request.MultipartForm.RemoveAll()
	typed := view.Settings{BrandName: c.PostForm("display_name"), BrandAccent: c.PostForm("accent")}
	ch := merchant.BrandChange{DisplayName: typed.BrandName, Accent: typed.BrandAccent, RemoveLogo: c.PostForm("remove_logo") != ""}
	if fh, err := c.FormFile("logo"); err == nil {
		f, err := fh.Open()
		if err == nil {
			ch.Logo, err = io.ReadAll(io.LimitReader(f, maxBrandBody))
			f.Close()
		}
		if err != nil {
			s.Fail(c, err)
			return
		}
	}
	if len(ch.Logo) > 0 {
		if wait, ok := s.logoUploads.Allow(in.Merchant.ID, s.Now()); !ok {
			s.Resolve(c, surface.RateLimited("Too many logo uploads.", wait))
			mins := max(int((wait+time.Minute-1)/time.Minute), 1)
			typed.BrandError, typed.BrandField = fmt.Sprintf("You have uploaded %d logos in the last hour. Wait about %d %s and try again.",
				logoUploadsPerWindow, mins, components.Plural(mins, "minute", "minutes")), "logo"
			s.renderSettings(c, http.StatusTooManyRequests, typed)
			return
		}
	}
	_, err := s.merchants.SetBrand(ctx, in.Merchant.ID, ch, actor(c))
	if e, ok := errs.As(err); ok && e.Code == errs.InvalidRequest {
		s.Resolve(c, err)
		typed.BrandError, typed.BrandField = sentence(e.Message), e.Param
		s.renderSettings(c, http.StatusUnprocessableEntity, typed)
		return
	}
	s.done(c, err, "Saved the hosted page's brand.", "/dashboard/settings")
}
