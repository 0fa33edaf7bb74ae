// JSON text written directly, without building a document: the string escaping of the
// wire encoders on hot paths (the upstream chat request of every model call). Pure,
// standard library only, safe from any thread. Who may touch it: anyone keeping the
// byte-for-byte contract below (tests/json_text_test.cpp holds it against nlohmann).
//
// Contract: append_json_string writes exactly what nlohmann::json's
// dump(-1, ' ', false, error_handler_t::replace) writes for a string holding `text`:
//   - well-formed UTF-8 (no overlongs, surrogates or code points above U+10FFFF) is
//     copied as is, except " \ and the control characters below U+0020, escaped as
//     \" \\ \b \t \n \f \r and \u00xx (lowercase hex) for the others; U+007F is copied;
//   - ill-formed input becomes U+FFFD (as UTF-8): a byte that cannot start a sequence
//     is one U+FFFD; a started sequence cut by a byte that cannot continue it is one
//     U+FFFD for the started bytes, and that byte is read again as a new start; a
//     sequence cut by the end of the text is one U+FFFD.
#pragma once

#include <string>
#include <string_view>

namespace mneme {

// Appends `text` as a quoted JSON string to `out` (see the contract above).
void append_json_string(std::string& out, std::string_view text);

} // namespace mneme
