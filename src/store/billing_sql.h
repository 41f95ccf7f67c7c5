// SQL shared by the SQLite and PostgreSQL stores for imported bills: the
// column lists, and the queries behind `cost showback`.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "causeway/store.h"

namespace causeway::schema {

// An import's own columns are declared with its row (rows.h: kBillingImportRow).
// Every column but import_id, in BillingRollup's order after `provider`.
inline constexpr const char* kBillingRollupColumns =
    "provider, day, month, provider_name, sub_account, region, resource_id, service_category, charge_category, "
    "pricing_category, commitment_status, currency, team, owner, job_id, project, row_count, billed, "
    "billed_frac, effective, effective_frac, list, list_frac, contracted, contracted_frac, gpu_hours, gpu_hours_frac";
inline constexpr int kBillingRollupColumnCount = 27;
// The amount columns, in BillingRollup's order: each is two columns, NAME
// and NAME_frac.
inline constexpr const char* kBillingAmounts[] = {"billed", "effective", "list", "contracted", "gpu_hours"};

// An amount as its two stored columns: floor nanos, and picos 0..999.
inline std::pair<int64_t, int64_t> SplitPicos(Picos v) {
  Picos nanos = v / 1000, frac = v % 1000;
  if (frac < 0) frac += 1000, nanos -= 1;
  return {static_cast<int64_t>(nanos), static_cast<int64_t>(frac)};
}
inline Picos JoinPicos(Picos nanos, Picos frac) { return nanos * 1000 + frac; }

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
    case BillingDim::kCommitmentStatus: return "commitment_status";
  }
  return "team";
}

// The rollups a query covers, not grouped (the SQLite store sums them
// itself, exactly and without a sort). Parameters: 1 from_day, 2 to_day, 3
// provider ('' = no bound). Result columns: one per dimension, currency,
// row_count, then NAME and NAME_frac for each of kBillingAmounts.
inline std::string BillingRowsSql(const BillingQuery& q) {
  std::string sql = "SELECT ";
  for (BillingDim d : q.group_by) {
    sql += BillingDimColumn(d);
    sql += ", ";
  }
  sql += "currency, row_count";
  for (const char* m : kBillingAmounts) sql += ", " + std::string(m) + ", " + m + "_frac";
  sql += " FROM billing_rollups WHERE (?1 = '' OR day >= ?1) AND (?2 = '' OR day < ?2) AND (?3 = '' OR provider = ?3)";
  return sql;
}

// The grouped query for PostgreSQL, whose SUM of bigint is numeric (exact,
// read back as text). Parameters: $1 from_day, $2 to_day, $3 provider (''
// = no bound). Result columns: one per dimension, currency, the row_count
// sum, then for each of kBillingAmounts the sums of NAME and NAME_frac.
inline std::string BillingQuerySql(const BillingQuery& q) {
  std::string keys;
  for (BillingDim d : q.group_by) {
    keys += BillingDimColumn(d);
    keys += ", ";
  }
  keys += "currency";
  std::string sql = "SELECT " + keys + ", SUM(row_count)::text";
  for (const char* m : kBillingAmounts) sql += ", SUM(" + std::string(m) + ")::text, SUM(" + m + "_frac)::text";
  sql += " FROM billing_rollups WHERE ($1 = '' OR day >= $1) AND ($2 = '' OR day < $2) AND ($3 = '' OR provider = $3)"
         " GROUP BY " + keys + " ORDER BY " + keys;
  return sql;
}

}  // namespace causeway::schema
