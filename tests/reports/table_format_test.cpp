// The one formatter behind `stats` and `query`: aligned text, RFC 4180 CSV,
// JSON rows.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "table_format.h"

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

TEST(TableFormat, AnUnnamedTableIsABareJsonArray) {
  Table query{"", {"n"}, {{int64_t{7}}}};
  nlohmann::json document = nlohmann::json::parse(render({query}, OutputFormat::Json));
  ASSERT_TRUE(document.is_array());
  EXPECT_EQ(document[0]["n"], 7);
}

TEST(TableFormat, RejectsUnknownFormatNames) {
  EXPECT_EQ(parse_output_format("csv"), OutputFormat::Csv);
  EXPECT_THROW(parse_output_format("xml"), std::invalid_argument);
}

}  // namespace
}  // namespace apptracer
