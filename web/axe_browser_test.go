package web_test

// axe-core (installed by `make browser` beside the playwright driver)
// checks a page in Chromium; serious and critical violations fail.
