package llm

import "encoding/base64"

// URLOrData returns the image's URL when it has one, else its bytes as a
// data: URL, the form OpenAI-style APIs accept for inline images.
func (img *Image) URLOrData() string {
	if img.URL != "" {
		return img.URL
	}
	return "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
}
