#include "wirezip/codecs/registry.hpp"

#include <fmt/format.h>

#include "codec_table.hpp"

namespace wirezip::codecs {

std::unique_ptr<Codec> make_codec(std::string_view spec) { return parse_codec_spec(spec).make(); }

std::vector<CodecInfo> list_codecs() {
  std::vector<CodecInfo> out;
  for (const ListedSpec& listed : listed_specs())
    out.push_back(
        {std::string(listed.spec), std::string(listed.description), libraries_text(parse_codec_spec(listed.spec))});
  return out;
}

std::vector<std::string> default_codec_specs() {
  std::vector<std::string> out;
  for (const ListedSpec& listed : listed_specs())
    if (listed.in_defaults) out.emplace_back(listed.spec);
  return out;
}

std::vector<CodecForm> codec_forms() {
  std::vector<CodecForm> out;
  for (const CodecRow& row : codec_table()) {
    std::vector<std::string> texts;
    for (std::string_view key : row.libraries) texts.push_back(library_text(key));
    const std::string stage = row.stage == RowRole::coder ? "[+CODER]" : row.stage ? "+COMPRESSOR" : "";
    out.push_back({row_form(row, true) + stage, std::string(role_name(row.role)),
                   fmt::format("{}", fmt::join(texts, ", ")),
                   row.planes ? decoder_names(*row.planes) : std::vector<std::string>{}});
  }
  return out;
}

std::map<std::string, std::string> library_versions() {
  std::map<std::string, std::string> out;
  for (const Library& library : libraries()) out[std::string(library.key)] = library.version();
  return out;
}

}  // namespace wirezip::codecs
