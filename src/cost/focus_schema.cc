#include "cost/focus_schema.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

namespace causeway::cost {
namespace focus_schema {

const ColumnSpec kColumns[] = {
    {"AvailabilityZone", true, false, Type::kString, "1.0"},
    {"BilledCost", false, true, Type::kDecimal, "1.0"},
    {"BillingAccountId", false, true, Type::kString, "1.0"},
    {"BillingAccountName", true, true, Type::kString, "1.0"},
    {"BillingAccountType", false, false, Type::kString, "1.2"},
    {"BillingCurrency", false, true, Type::kString, "1.0"},
    {"BillingPeriodEnd", false, true, Type::kDateTime, "1.0"},
    {"BillingPeriodStart", false, true, Type::kDateTime, "1.0"},
    {"CapacityReservationId", true, false, Type::kString, "1.1"},
    {"CapacityReservationStatus", true, false, Type::kString, "1.1"},
    {"ChargeCategory", false, true, Type::kString, "1.0"},
    {"ChargeClass", true, true, Type::kString, "1.0"},
    {"ChargeDescription", true, true, Type::kString, "1.0"},
    {"ChargeFrequency", false, false, Type::kString, "1.0"},
    {"ChargePeriodEnd", false, true, Type::kDateTime, "1.0"},
    {"ChargePeriodStart", false, true, Type::kDateTime, "1.0"},
    {"CommitmentDiscountCategory", true, false, Type::kString, "1.0"},
    {"CommitmentDiscountId", true, false, Type::kString, "1.0"},
    {"CommitmentDiscountName", true, false, Type::kString, "1.0"},
    {"CommitmentDiscountQuantity", true, false, Type::kDecimal, "1.1"},
    {"CommitmentDiscountStatus", true, false, Type::kString, "1.0"},
    {"CommitmentDiscountType", true, false, Type::kString, "1.0"},
    {"CommitmentDiscountUnit", true, false, Type::kString, "1.1"},
    {"ConsumedQuantity", true, false, Type::kDecimal, "1.0"},
    {"ConsumedUnit", true, false, Type::kString, "1.0"},
    {"ContractedCost", false, true, Type::kDecimal, "1.0"},
    {"ContractedUnitPrice", true, false, Type::kDecimal, "1.0"},
    {"EffectiveCost", false, true, Type::kDecimal, "1.0"},
    {"InvoiceId", true, false, Type::kString, "1.2"},
    {"InvoiceIssuerName", false, true, Type::kString, "1.0"},
    {"ListCost", false, true, Type::kDecimal, "1.0"},
    {"ListUnitPrice", true, false, Type::kDecimal, "1.0"},
    {"PricingCategory", true, false, Type::kString, "1.0"},
    {"PricingCurrency", true, false, Type::kString, "1.2"},
    {"PricingCurrencyContractedUnitPrice", true, false, Type::kDecimal, "1.2"},
    {"PricingCurrencyEffectiveCost", true, false, Type::kDecimal, "1.2"},
    {"PricingCurrencyListUnitPrice", true, false, Type::kDecimal, "1.2"},
    {"PricingQuantity", true, true, Type::kDecimal, "1.0"},
    {"PricingUnit", true, true, Type::kString, "1.0"},
    {"ProviderName", false, true, Type::kString, "1.0"},
    {"PublisherName", false, true, Type::kString, "1.0"},
    {"RegionId", true, false, Type::kString, "1.0"},
    {"RegionName", true, false, Type::kString, "1.0"},
    {"ResourceId", true, false, Type::kString, "1.0"},
    {"ResourceName", true, false, Type::kString, "1.0"},
    {"ResourceType", true, false, Type::kString, "1.0"},
    {"ServiceCategory", false, true, Type::kString, "1.0"},
    {"ServiceName", false, true, Type::kString, "1.0"},
    {"ServiceSubcategory", false, false, Type::kString, "1.1"},
    {"SkuId", true, false, Type::kString, "1.0"},
    {"SkuMeter", true, false, Type::kString, "1.1"},
    {"SkuPriceDetails", true, false, Type::kJson, "1.1"},
    {"SkuPriceId", true, false, Type::kString, "1.0"},
    {"SubAccountId", true, false, Type::kString, "1.0"},
    {"SubAccountName", true, false, Type::kString, "1.0"},
    {"SubAccountType", true, false, Type::kString, "1.2"},
    {"Tags", true, false, Type::kJson, "1.0"},
};

namespace {


int IntroducedIn(const ColumnSpec& c) { return c.introduced[2] == '0' ? 10 : 10 + (c.introduced[2] - '0'); }

}  // namespace

const std::vector<EnumSpec>& Enums() {
  static const std::vector<EnumSpec> enums = {
      {"ChargeCategory", {"Usage", "Purchase", "Tax", "Credit", "Adjustment"}},
      {"ChargeClass", {"Correction"}},
      {"ChargeFrequency", {"One-Time", "Recurring", "Usage-Based"}},
      {"PricingCategory", {"Standard", "Dynamic", "Committed", "Other"}},
      {"CommitmentDiscountStatus", {"Used", "Unused"}},
      {"CommitmentDiscountCategory", {"Spend", "Usage"}},
      {"CapacityReservationStatus", {"Used", "Unused"}},
      {"ServiceCategory",
       {"AI and Machine Learning", "Analytics", "Business Applications", "Compute", "Databases", "Developer Tools",
        "Multicloud", "Identity", "Integration", "Internet of Things", "Management and Governance", "Media",
        "Migration", "Mobile", "Networking", "Security", "Storage", "Web", "Other"}},
  };
  return enums;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

Result<Schema> ReadHeader(const std::string& path, const std::vector<CsvField>& header,
                          const FocusOptions& options, IssueLog& issues) {
  static const std::unordered_map<std::string_view, Field> kFieldOf = {
      {"ChargePeriodStart", Field::kChargeStart}, {"ChargePeriodEnd", Field::kChargeEnd},
      {"BillingPeriodStart", Field::kBillingStart}, {"BillingPeriodEnd", Field::kBillingEnd},
      {"BilledCost", Field::kBilled}, {"EffectiveCost", Field::kEffective}, {"ListCost", Field::kList},
      {"ContractedCost", Field::kContracted}, {"ConsumedQuantity", Field::kConsumed},
      {"ProviderName", Field::kProviderName}, {"BillingAccountId", Field::kBillingAccountId},
      {"SubAccountId", Field::kSubAccountId}, {"RegionId", Field::kRegionId}, {"ResourceId", Field::kResourceId},
      {"ResourceType", Field::kResourceType}, {"ServiceName", Field::kServiceName}, {"SkuId", Field::kSkuId},
      {"CommitmentDiscountId", Field::kCommitmentDiscountId}, {"ConsumedUnit", Field::kConsumedUnit},
      {"PricingUnit", Field::kPricingUnit}, {"BillingCurrency", Field::kCurrency},
      {"PricingCurrency", Field::kPricingCurrency}, {"Tags", Field::kTags},
      {"ServiceCategory", Field::kServiceCategory}, {"ChargeCategory", Field::kChargeCategory},
      {"ChargeClass", Field::kChargeClass}, {"PricingCategory", Field::kPricingCategory},
      {"CommitmentDiscountStatus", Field::kCommitmentStatus},
  };
  Schema schema;
  std::vector<bool> seen(std::size(kColumns), false);
  int newest = 10;
  for (const CsvField& f : header) {
    ColumnPlan p;
    p.name = std::string(f.text);
    for (const ColumnSpec& c : kColumns) {
      if (p.name == c.name || EqualsIgnoreCase(p.name, c.name)) {
        if (p.name != c.name) {
          issues.Add(1, p.name, "column-case", [&] {
            return "column '" + p.name + "' is spelled '" + c.name + "' in FOCUS (column ids are case-sensitive)";
          });
        }
        p.spec = &c;
        break;
      }
    }
    if (p.spec) {
      size_t index = static_cast<size_t>(p.spec - kColumns);
      if (seen[index]) {
        return InvalidArgument(path + ":1: column " + p.spec->name + " appears twice",
                               {Diagnostic{path, 1, 0, p.spec->name, "appears twice"}});
      }
      seen[index] = true;
      p.bit = uint64_t{1} << index;
      newest = std::max(newest, IntroducedIn(*p.spec));
      if (auto it = kFieldOf.find(p.spec->name); it != kFieldOf.end()) {
        p.field = it->second;
      } else if (p.spec->type == Type::kDateTime) {
        p.field = Field::kOtherTime;
      } else if (p.spec->type == Type::kDecimal) {
        p.field = Field::kOtherDecimal;
      } else if (p.spec->type == Type::kJson) {
        p.field = Field::kOtherJson;
      } else {
        p.field = Field::kOther;
      }
      for (const EnumSpec& e : Enums()) {
        if (p.spec->name == std::string_view(e.column)) {
          p.enumeration = &e;
          if (p.field == Field::kOther) p.field = Field::kEnum;
        }
      }
      p.plain = !p.enumeration && p.spec->type == Type::kString && p.field != Field::kCurrency &&
                p.field != Field::kPricingCurrency;
      p.direct = p.spec->type == Type::kDecimal;
    } else if (p.name.rfind("x_", 0) != 0) {
      issues.Add(1, p.name, "custom-column-prefix", [&] {
        return "column '" + p.name + "' is not a FOCUS column; custom columns must start with 'x_'";
      });
    }
    schema.plan.push_back(std::move(p));
  }
  schema.version = options.version.value_or(newest);
  bool has_period = false, has_cost = false;
  for (size_t i = 0; i < std::size(kColumns); ++i) {
    const ColumnSpec& c = kColumns[i];
    if (!seen[i] && c.mandatory && IntroducedIn(c) <= schema.version) {
      issues.Add(1, c.name, "mandatory-column", [&] {
        return std::string("mandatory column ") + c.name + " of FOCUS " + FocusVersionName(schema.version) +
               " is missing";
      });
    }
    if (seen[i] && IntroducedIn(c) > schema.version) {
      issues.Add(1, c.name, "column-version", [&] {
        return std::string("column ") + c.name + " is FOCUS " + c.introduced + ", newer than the file's " +
               FocusVersionName(schema.version);
      });
    }
    has_period |= seen[i] && std::string_view(c.name) == "ChargePeriodStart";
    has_cost |= seen[i] && (std::string_view(c.name) == "BilledCost" || std::string_view(c.name) == "EffectiveCost");
  }
  if (!has_period || !has_cost) {
    return InvalidArgument(path + ":1: not a FOCUS file: cost needs ChargePeriodStart and BilledCost or EffectiveCost",
                           {Diagnostic{path, 1, 0, has_period ? "BilledCost" : "ChargePeriodStart", "missing"}});
  }
  return schema;
}

}  // namespace focus_schema

uint64_t FocusColumnBit(std::string_view column) {
  static_assert(std::size(focus_schema::kColumns) <= 64);
  for (size_t i = 0; i < std::size(focus_schema::kColumns); ++i) {
    if (column == focus_schema::kColumns[i].name) return uint64_t{1} << i;
  }
  return 0;
}

}  // namespace causeway::cost
