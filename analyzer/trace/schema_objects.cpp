#include "analyzer/trace/schema_objects.h"

#include <cctype>
#include <map>
#include <string_view>
#include <vector>

#include "analyzer/trace/trace_file.h"
#include "apptracer/tables.h"

namespace apptracer {

namespace {

std::string folded(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

struct SchemaObject {
  std::string type, name, sql;
};

// The first words of `sql`, upper case, single-spaced ("CREATE VIRTUAL TABLE").
std::string leading_words(std::string_view sql, size_t words) {
  std::string out;
  size_t i = 0;
  while (words > 0 && i < sql.size()) {
    while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i]))) ++i;
    if (i == sql.size()) break;
    if (!out.empty()) out += ' ';
    while (i < sql.size() && !std::isspace(static_cast<unsigned char>(sql[i]))) {
      out += static_cast<char>(std::toupper(static_cast<unsigned char>(sql[i++])));
    }
    --words;
  }
  return out;
}

class SchemaCheck {
 public:
  SchemaCheck(Database& db, const std::string& path) : db_(db), path_(path) {
    Statement rows = db.prepare("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master");
    while (rows.step()) {
      SchemaObject object{rows.text(0), rows.text(1), rows.text(3)};
      if (object.type == "trigger") {
        triggers_.emplace(folded(rows.text(2)), object.name);
      } else if (object.type == "table" || object.type == "view") {
        objects_.emplace(folded(object.name), object);
      }
    }
  }

  void run() {
    for (const TableInfo& table : all_tables()) {
      if (const SchemaObject* object = find(table.name)) require_ordinary_table(table.name, *object);
    }
    for (const ViewInfo& view : all_views()) {
      const SchemaObject* object = find(view.name);
      if (!object) continue;
      if (object->type == "table") {
        require_ordinary_table(view.name, *object);
      } else if (!declared_view_text(view, object->sql)) {
        refuse(view.name + " is not the view apptracer declares under that name");
      }
    }
  }

 private:
  const SchemaObject* find(const std::string& name) {
    std::string key = folded(name);
    auto trigger = triggers_.find(key);
    if (trigger != triggers_.end()) {
      refuse("trigger " + trigger->second + " is on " + name + "; apptracer traces have none");
    }
    auto found = objects_.find(key);
    return found == objects_.end() ? nullptr : &found->second;
  }

  void require_ordinary_table(const std::string& name, const SchemaObject& object) {
    if (object.type != "table") refuse(name + " is a " + object.type + ", not a table");
    if (leading_words(object.sql, 2) != "CREATE TABLE") {
      refuse(name + " is not an ordinary table (" + one_line(leading_words(object.sql, 3), 40) + ")");
    }
    Statement generated = db_.prepare(
        "SELECT name FROM pragma_table_xinfo(?) WHERE hidden != 0 LIMIT 1");
    generated.bind(1, object.name);
    if (generated.step()) {
      refuse(name + "." + generated.text(0) + " is a generated column; apptracer traces have none");
    }
  }

  static bool declared_view_text(const ViewInfo& view, const std::string& sql) {
    for (bool merged : {false, true}) {
      std::string declared = create_view_sql(view, merged);
      while (!declared.empty() && (declared.back() == '\n' || declared.back() == ';')) {
        declared.pop_back();
      }
      if (sql == declared) return true;
    }
    return false;
  }

  [[noreturn]] void refuse(const std::string& what) {
    throw TraceError(path_ + ": " + one_line(what, 120) +
                     ": not a trace apptracer wrote (refused before reading it)");
  }

  Database& db_;
  const std::string& path_;
  std::map<std::string, SchemaObject> objects_;        // by folded name
  std::multimap<std::string, std::string> triggers_;  // folded table name -> trigger
};

}  // namespace

void check_schema_objects(Database& db, const std::string& path) { SchemaCheck(db, path).run(); }

}  // namespace apptracer
