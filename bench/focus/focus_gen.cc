// Writes a FOCUS 1.2 CSV of a GPU cloud's hourly bill, for bench/focus:
//   focus_gen ROWS > bill.csv
// Each node-hour of a fleet of 8-GPU nodes gives seven charge rows (GPU
// compute, CPU, memory, local NVMe, InfiniBand, public IP, egress); the
// fleet grows with ROWS so the file spans about 60 days. Tags carry the team,
// owner, job and project Causeway sets on what it launches. Deterministic.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

namespace {

struct Sku {
  const char* id;
  const char* description;
  const char* category;
  const char* unit;
  double price;     // list price per unit
  double quantity;  // units per node-hour
};

constexpr Sku kSkus[] = {
    {"gpu-h100-sxm", "NVIDIA H100 SXM GPU hour", "Compute", "GPU-Hours", 2.95, 8},
    {"cpu-xeon", "vCPU hour", "Compute", "vCPU-Hours", 0.012, 128},
    {"mem-ddr5", "Memory GiB hour", "Compute", "GiB-Hours", 0.0015, 1600},
    {"nvme-local", "Local NVMe TiB hour", "Storage", "TiB-Hours", 0.011, 30},
    {"ib-ndr", "InfiniBand NDR port hour", "Networking", "Port-Hours", 0.2, 8},
    {"ip-public", "Public IPv4 address hour", "Networking", "IP-Hours", 0.005, 1},
    {"egress", "Internet egress GB", "Networking", "GB", 0.05, 3.5},
};

void Time(char* out, size_t n, int64_t t) {
  time_t tt = static_cast<time_t>(t);
  struct tm tm;
  gmtime_r(&tt, &tm);
  strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: focus_gen ROWS > bill.csv\n");
    return 2;
  }
  const int64_t rows = std::strtoll(argv[1], nullptr, 10);
  constexpr int64_t kHours = 24 * 60;
  constexpr int kSkusPerHour = sizeof(kSkus) / sizeof(kSkus[0]);
  int64_t nodes = rows / (kHours * kSkusPerHour) + 1;
  static char buf[1 << 20];
  std::setvbuf(stdout, buf, _IOFBF, sizeof buf);
  std::fputs(
      "BilledCost,BillingAccountId,BillingAccountName,BillingAccountType,BillingCurrency,BillingPeriodEnd,"
      "BillingPeriodStart,ChargeCategory,ChargeClass,ChargeDescription,ChargeFrequency,ChargePeriodEnd,"
      "ChargePeriodStart,ConsumedQuantity,ConsumedUnit,ContractedCost,ContractedUnitPrice,EffectiveCost,"
      "InvoiceIssuerName,ListCost,ListUnitPrice,PricingCategory,PricingQuantity,PricingUnit,ProviderName,"
      "PublisherName,RegionId,RegionName,ResourceId,ResourceName,ResourceType,ServiceCategory,ServiceName,SkuId,"
      "SkuPriceId,SubAccountId,SubAccountName,Tags,x_GpuType\n",
      stdout);
  const int64_t start = 1725148800;  // 2024-09-01T00:00:00Z
  int64_t written = 0;
  char cs[32], ce[32], bs[32], be[32];
  for (int64_t h = 0; h < kHours && written < rows; ++h) {
    int64_t t = start + h * 3600;
    Time(cs, sizeof cs, t);
    Time(ce, sizeof ce, t + 3600);
    // Monthly billing periods.
    time_t tt = static_cast<time_t>(t);
    struct tm tm;
    gmtime_r(&tt, &tm);
    tm.tm_mday = 1, tm.tm_hour = 0, tm.tm_min = 0, tm.tm_sec = 0;
    int64_t period_start = static_cast<int64_t>(timegm(&tm));
    tm.tm_mon += 1;
    int64_t period_end = static_cast<int64_t>(timegm(&tm));
    Time(bs, sizeof bs, period_start);
    Time(be, sizeof be, period_end);
    for (int64_t n = 0; n < nodes && written < rows; ++n) {
      // A node runs one job for 6 to 30 hours at a time.
      int64_t job = (n * 7919 + (h + n * 13) / (6 + n % 25)) % 1000003;
      int team = static_cast<int>((job * 31) % 40);
      int owner = static_cast<int>((job * 17) % 400);
      int project = static_cast<int>((job * 3) % 120);
      bool committed = n % 4 != 0;  // three quarters of the fleet is reserved
      for (const Sku& s : kSkus) {
        if (written++ >= rows) break;
        double list = s.price * s.quantity;
        double effective = committed ? list * 0.62 : list;
        double billed = committed ? 0.0 : list;
        std::printf(
            "%.6f,ba-1001,Acme Research,Enterprise,USD,%s,%s,Usage,,%s,Usage-Based,%s,%s,%.4f,%s,%.6f,%.6f,%.6f,"
            "Nimbus GPU Cloud,%.6f,%.6f,%s,%.4f,%s,Nimbus GPU Cloud,Nimbus GPU Cloud,us-east-1,US East,"
            "node-%05" PRId64 ",gpu-node-%05" PRId64 ",Virtual Machine,%s,GPU Compute,%s,%s-%s,sa-%02d,research-%02d,"
            "\"{\"\"causeway-team\"\": \"\"team-%02d\"\", \"\"causeway-owner\"\": \"\"user%03d@acme.example\"\", "
            "\"\"causeway-job\"\": \"\"job_%07" PRId64 "\"\", \"\"causeway-project\"\": \"\"p-%03d\"\"}\",H100\n",
            billed, be, bs, s.description, ce, cs, s.quantity, s.unit, effective, committed ? s.price * 0.62 : s.price,
            effective, list, s.price, committed ? "Committed" : "Standard", s.quantity, s.unit, n, n, s.category, s.id,
            s.id, committed ? "c" : "od", static_cast<int>(n % 8), static_cast<int>(n % 8), team, owner, job, project);
      }
    }
  }
  return 0;
}
