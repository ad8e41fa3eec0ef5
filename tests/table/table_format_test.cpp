// The one formatter behind `stats` and `query`: aligned text, RFC 4180 CSV,
// JSON rows.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "analyzer/table/table_format.h"
#include "apptracer/text_escape.h"

namespace apptracer {
namespace {

Table sample_table() {
  Table table{"copies", {"kind", "count", "rate"}, {}};
  table.rows.push_back({std::string("HtoD"), int64_t{12}, 2.5});
  table.rows.push_back({std::string("a,\"b\""), int64_t{3}, Cell{}});
  return table;
}

std::string render(const std::vector<Table>& tables, OutputFormat format) {
  std::ostringstream out;
  write_tables(out, tables, format);
  return out.str();
}

TEST(TableFormat, TextAlignsNumbersRightAndTextLeft) {
  EXPECT_EQ(render({sample_table()}, OutputFormat::Table),
            "== copies ==\n"
            "kind   count  rate\n"
            "-----  -----  ----\n"
            "HtoD      12   2.5\n"
            "a,\"b\"      3      \n");
}

TEST(TableFormat, CsvQuotesFieldsThatNeedIt) {
  EXPECT_EQ(render({sample_table()}, OutputFormat::Csv),
            "kind,count,rate\r\nHtoD,12,2.5\r\n\"a,\"\"b\"\"\",3,\r\n");
}

TEST(TableFormat, SeveralTablesGetHeadings) {
  Table second{"other", {"x"}, {{int64_t{1}}}};
  std::string csv = render({sample_table(), second}, OutputFormat::Csv);
  EXPECT_NE(csv.find("# copies\r\n"), std::string::npos);
  EXPECT_NE(csv.find("\r\n# other\r\nx\r\n1\r\n"), std::string::npos);
}

TEST(TableFormat, JsonIsKeyedByTableNameWithTypedValues) {
  nlohmann::json document = nlohmann::json::parse(render({sample_table()}, OutputFormat::Json));
  ASSERT_TRUE(document.contains("copies"));
  EXPECT_EQ(document["copies"][0]["kind"], "HtoD");
  EXPECT_EQ(document["copies"][0]["count"], 12);
  EXPECT_DOUBLE_EQ(document["copies"][0]["rate"].get<double>(), 2.5);
  EXPECT_TRUE(document["copies"][1]["rate"].is_null());
}

TEST(TableFormat, ATableOfTooManyRowsShowsItsFirstAndCountsTheRestInTextOnly) {
  Table table = sample_table();
  table.text_rows = 1;
  EXPECT_EQ(render({table}, OutputFormat::Table),
            "== copies ==\n"
            "kind  count  rate\n"
            "----  -----  ----\n"
            "HtoD     12   2.5\n"
            "(1 more rows; --format csv or json lists every one)\n");
  EXPECT_EQ(render({table}, OutputFormat::Csv), render({sample_table()}, OutputFormat::Csv));
  EXPECT_EQ(nlohmann::json::parse(render({table}, OutputFormat::Json))["copies"].size(), 2u);
  table.text_rows = 2;
  EXPECT_EQ(render({table}, OutputFormat::Table), render({sample_table()}, OutputFormat::Table));
}

// A column whose whole text hides what tells its cells apart (kernels'
// C++ names) is shown in its text form in the table format only; CSV and
// JSON, which programs read, keep the cell whole.
TEST(TableFormat, AColumnsTextFormIsForTheTableFormatOnly) {
  Table table{"kernels", {"name", "count"}, {}};
  table.rows.push_back({std::string("void k<Long, Functor<A>>(int, float)"), int64_t{2}});
  set_text_form(table, "name", [](std::string_view name) { return std::string(name.substr(0, name.find('<'))) + "<A>"; });
  EXPECT_EQ(render({table}, OutputFormat::Table),
            "== kernels ==\n"
            "name       count\n"
            "---------  -----\n"
            "void k<A>      2\n");
  EXPECT_EQ(render({table}, OutputFormat::Csv), "name,count\r\n\"void k<Long, Functor<A>>(int, float)\",2\r\n");
  EXPECT_EQ(nlohmann::json::parse(render({table}, OutputFormat::Json))["kernels"][0]["name"],
            "void k<Long, Functor<A>>(int, float)");
}

// Two kernels whose text forms are alike (their short names elide the only
// argument that differs) are numbered in the table format, in their rows'
// order, the same kernel's rows alike; CSV and JSON keep them whole.
TEST(TableFormat, CellsWhoseTextFormsAreAlikeAreNumbered) {
  Table table{"kernels", {"name", "count"}, {}};
  table.rows.push_back({std::string("void k<512, F>(int)"), int64_t{2}});
  table.rows.push_back({std::string("void j<G>(int)"), int64_t{2}});
  table.rows.push_back({std::string("void k<128, F>(int)"), int64_t{1}});
  table.rows.push_back({std::string("void k<512, F>(int)"), int64_t{1}});
  set_text_form(table, "name", [](std::string_view name) {
    std::string kept(name.substr(0, name.find('<')));
    return kept + (name.find('F') != std::string_view::npos ? "<F>" : "<G>");
  });
  EXPECT_EQ(render({table}, OutputFormat::Table),
            "== kernels ==\n"
            "name           count\n"
            "-------------  -----\n"
            "void k<F> [1]      2\n"
            "void j<G>          2\n"
            "void k<F> [2]      1\n"
            "void k<F> [1]      1\n"
            "(names numbered [1], [2] shorten alike; --format csv or json gives them whole)\n");
  EXPECT_EQ(nlohmann::json::parse(render({table}, OutputFormat::Json))["kernels"][2]["name"], "void k<128, F>(int)");
}

TEST(TableFormat, AnUnnamedTableIsABareJsonArray) {
  Table query{"", {"n"}, {{int64_t{7}}}};
  nlohmann::json document = nlohmann::json::parse(render({query}, OutputFormat::Json));
  ASSERT_TRUE(document.is_array());
  EXPECT_EQ(document[0]["n"], 7);
}

TEST(TableFormat, TerminalTextShowsControlCharactersAsEscapes) {
  EXPECT_EQ(terminal_text("plain name(float*), µs ✓"), "plain name(float*), µs ✓");
  EXPECT_EQ(terminal_text("a\x1b[2Jb\rc\nd\te\x07\x7f"), "a\\x1b[2Jb\\rc\\nd\\te\\x07\\x7f");
  EXPECT_EQ(terminal_text(std::string("nul\0end", 7)), "nul\\x00end");
  EXPECT_EQ(terminal_text("csi\xc2\x9bm"), "csi\\u009bm");               // C1, as UTF-8
  EXPECT_EQ(terminal_text("lone\x9b\xff\xc3"), "lone\\x9b\\xff\\xc3");  // not UTF-8
  EXPECT_EQ(terminal_text("overlong\xc0\xaf"), "overlong\\xc0\\xaf");
}

TEST(TableFormat, ValidUtf8ReplacesWhatIsNotUtf8) {
  EXPECT_EQ(valid_utf8("ok µs ✓ \x1b"), "ok µs ✓ \x1b");
  // A stray byte, and a surrogate (not UTF-8 either): one U+FFFD per byte.
  EXPECT_EQ(valid_utf8("a\xff" "b\xed\xa0\x80"),
            "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

TEST(TableFormat, TextTablesEscapeControlCharactersCsvAndJsonQuoteThem) {
  Table table{"kernels", {"name\x1b", "count"}, {}};
  table.rows.push_back({std::string("evil\x1b[2J\rname"), int64_t{1}});
  std::string text = render({table}, OutputFormat::Table);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_NE(text.find("evil\\x1b[2J\\rname"), std::string::npos) << text;
  EXPECT_NE(render({table}, OutputFormat::Csv).find("\"evil\x1b[2J\rname\",1"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(render({table}, OutputFormat::Json))["kernels"][0]["name\x1b"],
            "evil\x1b[2J\rname");
}

TEST(TableFormat, RejectsUnknownFormatNames) {
  EXPECT_EQ(parse_output_format("csv"), OutputFormat::Csv);
  EXPECT_THROW(parse_output_format("xml"), std::invalid_argument);
}

}  // namespace
}  // namespace apptracer
