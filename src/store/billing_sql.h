// SQL shared by the SQLite and PostgreSQL stores for imported bills: the
// column lists, and the one grouping query behind `cost showback`.
#pragma once

#include <string>
#include <string_view>

#include "causeway/store.h"

namespace causeway::schema {

inline constexpr const char* kBillingImportColumns =
    "id, provider, file, sha256, focus_version, row_count, skipped, issues, first_day, last_day, imported_by, "
    "imported_at";
inline constexpr int kBillingImportColumnCount = 12;
// Every column but import_id, in BillingRollup's order after `provider`.
inline constexpr const char* kBillingRollupColumns =
    "provider, day, month, provider_name, sub_account, region, resource_id, service_category, charge_category, "
    "pricing_category, commitment_status, consumed_unit, currency, team, owner, job_id, project, row_count, billed, "
    "effective, list, contracted, consumed";
inline constexpr int kBillingRollupColumnCount = 23;

inline std::string_view BillingDimColumn(BillingDim d) {
  switch (d) {
    case BillingDim::kTeam: return "team";
    case BillingDim::kOwner: return "owner";
    case BillingDim::kProject: return "project";
    case BillingDim::kJob: return "job_id";
    case BillingDim::kProvider: return "provider";
    case BillingDim::kProviderName: return "provider_name";
    case BillingDim::kDay: return "day";
    case BillingDim::kMonth: return "month";
    case BillingDim::kServiceCategory: return "service_category";
    case BillingDim::kChargeCategory: return "charge_category";
    case BillingDim::kPricingCategory: return "pricing_category";
    case BillingDim::kResource: return "resource_id";
    case BillingDim::kSubAccount: return "sub_account";
    case BillingDim::kRegion: return "region";
  }
  return "team";
}

// Parameters: 1 from_day, 2 to_day, 3 provider ('' = no bound). Result
// columns: one per dimension, currency, then row_count, billed, effective,
// list, contracted, consumed sums.
inline std::string BillingQuerySql(const BillingQuery& q, bool postgres) {
  auto param = [&](int n) { return (postgres ? "$" : "?") + std::to_string(n); };
  std::string keys;
  for (BillingDim d : q.group_by) {
    keys += BillingDimColumn(d);
    keys += ", ";
  }
  keys += "currency";
  std::string sum_type = postgres ? "::text" : "";
  std::string sql = "SELECT " + keys;
  for (const char* m : {"row_count", "billed", "effective", "list", "contracted", "consumed"}) {
    sql += ", SUM(" + std::string(m) + ")" + sum_type;
  }
  sql += " FROM billing_rollups WHERE (" + param(1) + " = '' OR day >= " + param(1) + ") AND (" + param(2) +
         " = '' OR day < " + param(2) + ") AND (" + param(3) + " = '' OR provider = " + param(3) + ") GROUP BY " +
         keys + " ORDER BY " + keys;
  return sql;
}

}  // namespace causeway::schema
