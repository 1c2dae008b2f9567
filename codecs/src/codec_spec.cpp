// The one parser of codec spec text: each part checked against its row of the codec table.
#include "wirezip/codecs/codec_spec.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <optional>

#include "codec_table.hpp"
#include "wirezip/util/error.hpp"
#include "wirezip/util/spec.hpp"

namespace wirezip::codecs {
namespace {

[[noreturn]] void bad_spec(std::string_view text, std::string_view why) {
  fail("bad codec spec '{}': {}; valid forms: {}", text, why, valid_codec_forms());
}

// A word option's value: one of the row's words, or a decoder backend of its planes.
void check_word(const CodecRow& row, const OptionRow& option, const std::string& value) {
  if (option.decoder) {
    require_decoder(*row.planes, value);
    return;
  }
  if (std::find(option.words.begin(), option.words.end(), value) == option.words.end())
    fail("unknown {} '{}' for {} ({})", option.key, value, row.name, fmt::join(option.words, ", "));
}

SpecStage parse_stage(const CodecRow& row, std::string_view part_text) {
  SpecPart part = parse_spec_part(part_text);
  SpecStage stage{.row = &row, .words = split(part_text, ':')};
  stage.words.erase(stage.words.begin());
  for (const OptionRow& option : row.options) {
    if (option.positional) {
      if (part.positional.empty())
        fail("{} needs a {} ({}) after its name", row.name, option.key, fmt::join(option.words, ", "));
      check_word(row, option, part.positional.front());
      stage.choices[std::string(option.key)] = part.positional.front();
      part.positional.erase(part.positional.begin());
    } else if (option.is_words()) {
      const std::string key(option.key);
      const std::optional<std::string> given = part.take(key);
      if (given) check_word(row, option, *given);
      stage.choices[key] = given            ? *given
                           : option.decoder ? std::string(default_decoder(*row.planes))
                                            : std::string(option.fallback_word);
    } else {
      const std::string key(option.key);
      stage.numbers[key] = part.take_int(key, option.fallback, option.min, option.max);
    }
  }
  if (!part.positional.empty()) fail("unexpected word '{}'", part.positional.front());
  if (!part.options.empty()) fail("unknown option '{}' for {}", part.options.begin()->first, row.name);
  return stage;
}

const CodecRow& head_row(std::string_view name) {
  for (RowRole role : {RowRole::framing, RowRole::container, RowRole::coder})
    if (const CodecRow* row = find_row(role, name)) return *row;
  fail("unknown coder '{}'", name);
}

void parse_into(std::string_view text, std::vector<SpecStage>& stages) {
  const std::vector<std::string> parts = split(text, '+');
  const CodecRow& head = head_row(parse_spec_part(parts.front()).name);
  if (parts.size() > 1 && !head.stage) {
    std::vector<std::string_view> staged;
    for (const CodecRow& row : codec_table())
      if (row.stage) staged.push_back(row.name);
    fail("{} takes no '+' stage (only {} do)", head.name, fmt::join(staged, " and "));
  }
  if (parts.size() > 2) fail("{} takes one '+' stage", head.name);
  if (parts.size() == 1 && head.stage_required) fail("{} needs a '+' stage: a {}", head.name, role_name(*head.stage));
  stages.push_back(parse_stage(head, parts[0]));
  if (parts.size() == 2) {
    const std::string name = parse_spec_part(parts[1]).name;
    const CodecRow* row = find_row(*head.stage, name);
    if (!row) fail("unknown {} '{}'", role_name(*head.stage), name);
    stages.push_back(parse_stage(*row, parts[1]));
  }
  SpecStage* stage = stages.size() == 2 ? &stages[1] : nullptr;
  if (head.resolve) head.resolve(stages[0], nullptr, stage);
  if (stage && stage->row->resolve) stage->row->resolve(*stage, &stages[0], nullptr);
}

}  // namespace

std::string_view SpecStage::name() const { return row->name; }

bool SpecStage::given(std::string_view key) const {
  return std::any_of(words.begin(), words.end(), [&](const std::string& w) {
    return w.size() > key.size() && w.starts_with(key) && w[key.size()] == '=';
  });
}

std::int64_t SpecStage::number(std::string_view key) const {
  const auto it = numbers.find(key);
  if (it == numbers.end()) fail("codec table: {} has no integer option '{}'", name(), key);
  return it->second;
}

std::string SpecStage::choice(std::string_view key) const {
  const auto it = choices.find(key);
  return it == choices.end() ? std::string() : it->second;
}

CodecSpec parse_codec_spec(std::string_view text) {
  if (text.empty()) bad_spec(text, "empty");
  if (text.size() > kMaxCodecSpecText) fail("bad codec spec: {} bytes, at most {}", text.size(), kMaxCodecSpecText);
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7f; }))
    fail("bad codec spec: it has bytes that are not printable");
  CodecSpec spec;
  spec.text_ = text;
  try {
    parse_into(text, spec.stages_);
  } catch (const Error& e) {
    bad_spec(text, e.what());
  }
  return spec;
}

std::unique_ptr<Codec> CodecSpec::make() const {
  if (empty()) fail("no codec spec: this case has no codec");
  return stages_[0].row->make_codec(text_, stages_[0], stages_.size() == 2 ? &stages_[1] : nullptr);
}

CodecSpec CodecSpec::with_decoder(std::string_view decoder) const {
  const bool alone = stages_.size() == 1 && stages_[0].row->role == RowRole::coder;
  const bool staged = stages_.size() == 2 && stages_[1].row->role == RowRole::coder;
  if (empty() || (!alone && !staged) || !stages_.back().row->planes) {
    std::vector<std::string_view> readable;
    for (const CodecRow& row : codec_table())
      if (row.planes) readable.push_back(row.name);
    fail("codec '{}' takes no decoder (only {} planes are standard streams)", text_, fmt::join(readable, ", "));
  }
  std::vector<std::string> parts;
  for (const SpecStage& stage : stages_) {
    std::vector<std::string> words{std::string(stage.name())};
    for (const std::string& word : stage.words)
      if (&stage != &stages_.back() || !word.starts_with("decoder=")) words.push_back(word);
    if (&stage == &stages_.back()) words.push_back(fmt::format("decoder={}", decoder));
    parts.push_back(fmt::format("{}", fmt::join(words, ":")));
  }
  return parse_codec_spec(fmt::format("{}", fmt::join(parts, "+")));
}

std::size_t CodecSpec::max_compressed_size(std::size_t original_bytes) const {
  return make()->max_compressed_size(original_bytes);
}

bool CodecSpec::writes_frames() const { return !empty() && stages_[0].row->writes_frames; }

std::string valid_codec_forms() {
  std::vector<std::string> heads, coders;
  for (const CodecRow& row : codec_table()) {
    if (row.role == RowRole::coder) {
      coders.push_back(row_form(row, false));
    } else if (row.role != RowRole::compressor) {
      std::string form = row_form(row, false);
      if (row.stage == RowRole::coder) form += "[+CODER]";
      if (row.stage == RowRole::compressor) {
        std::vector<std::string_view> names;
        const CodecRow* first = nullptr;
        for (const CodecRow& inner : codec_table())
          if (inner.role == RowRole::compressor) names.push_back(inner.name), first = first ? first : &inner;
        form += fmt::format("+{{{}}}", fmt::join(names, "|"));
        form += row_form(*first, false).substr(first->name.size());
      }
      heads.push_back(std::move(form));
    }
  }
  return fmt::format("{}, or a CODER alone; CODER: {}", fmt::join(heads, ", "), fmt::join(coders, ", "));
}

}  // namespace wirezip::codecs
