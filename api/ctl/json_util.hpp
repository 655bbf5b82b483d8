#pragma once

// Reading the server's JSON objects without decoding them into the model: phalanxctl shows what
// the server sent, fields it does not know included, and never fails on a shape it did not expect
// (a missing field reads as empty).

#include <boost/json/value.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace phalanx::api::ctl {

/// The value at `path` (object keys), or nullptr when a step is missing or not an object.
const boost::json::value* find(const boost::json::value& v,
                               std::initializer_list<std::string_view> path);

/// The string at `path`; a number or boolean as text; `fallback` when missing or null.
std::string string_at(const boost::json::value& v, std::initializer_list<std::string_view> path,
                      std::string fallback = {});

/// The integer at `path`; `fallback` when missing or not an integer.
int64_t int_at(const boost::json::value& v, std::initializer_list<std::string_view> path,
               int64_t fallback = 0);

/// A scalar as text: strings as they are, numbers and booleans as JSON writes them, null as "".
std::string scalar_text(const boost::json::value& v);

/// `v` as indented JSON (four spaces, one member per line, keys in the server's order), as
/// `kubectl get -o json` prints it, with a final newline.
std::string pretty_json(const boost::json::value& v);

/// `v` with `apiVersion` before the other keys of every object that has one, as kubectl's
/// -o json prints an object (its Go structs declare TypeMeta first).
boost::json::value api_version_first(const boost::json::value& v);

/// `v` with every object's keys sorted, as kubectl's -o yaml prints them (apiVersion, items,
/// kind, metadata, spec, status).
boost::json::value sorted_keys(const boost::json::value& v);

} // namespace phalanx::api::ctl
