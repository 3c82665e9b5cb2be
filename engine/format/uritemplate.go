package format

import "github.com/yosida95/uritemplate/v3"

// validURITemplate checks the RFC 6570 grammar (level 4).
func validURITemplate(s string) bool {
	_, err := uritemplate.New(s)
	return err == nil
}
