// The FOCUS specification's columns as the reader uses them, and the plan
// it makes from a file's header: which column is which, what each must
// hold, what the reader does with it. Internal to src/cost (focus.cc reads
// rows by this plan).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/status.h"
#include "cost/csv.h"
#include "cost/focus.h"

namespace causeway::cost::focus_schema {

enum class Type { kString, kDecimal, kDateTime, kJson };

// The FOCUS 1.2 columns (the specification's column table): name, whether
// null is allowed, whether the column is Mandatory, its data type, and the
// version that introduced it (10 = 1.0; earlier previews count as 1.0).
struct ColumnSpec {
  const char* name;
  bool nullable;
  bool mandatory;
  Type type;
  const char* introduced;
};
// The columns, in the specification's order.
extern const ColumnSpec kColumns[];

// Allowed values of the enumerated columns (FOCUS 1.2; 1.0 and 1.1 allow
// a subset of the same spellings).
struct EnumSpec {
  const char* column;
  std::vector<std::string_view> values;
};
const std::vector<EnumSpec>& Enums();

bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// What the reader does with one column of the file.
enum class Field {
  kOther,  // no rule beyond nullability
  kChargeStart, kChargeEnd, kBillingStart, kBillingEnd, kOtherTime,
  kBilled, kEffective, kList, kContracted, kConsumed, kOtherDecimal,
  kProviderName, kBillingAccountId, kSubAccountId, kRegionId, kResourceId, kResourceType, kServiceName,
  kSkuId, kCommitmentDiscountId, kConsumedUnit, kPricingUnit,
  kEnum,  // checked against Enums()
  kServiceCategory, kChargeCategory, kChargeClass, kPricingCategory, kCommitmentStatus,  // enums cost uses
  kCurrency, kPricingCurrency,
  kTags, kOtherJson,
  kCustom,  // x_ or unknown: carried, not checked
};

struct ColumnPlan {
  std::string name;  // as in the file
  const ColumnSpec* spec = nullptr;
  uint64_t bit = 0;  // FocusColumnBit
  // A text column with no rule but nullability: read in place, no memo.
  bool plain = false;
  // A decimal: amounts differ from row to row, so a memo would mostly
  // miss; parsed each time.
  bool direct = false;
  Field field = Field::kCustom;
  const EnumSpec* enumeration = nullptr;
};

// The header, read once: what to do with each column.
struct Schema {
  std::vector<ColumnPlan> plan;
  FocusVersion version = 12;
};

// What to do with each column of `header` (issues noted); an error when
// the file is not FOCUS at all.
Result<Schema> ReadHeader(const std::string& path, const std::vector<CsvField>& header, const FocusOptions& options,
                          IssueLog& issues);

}  // namespace causeway::cost::focus_schema
