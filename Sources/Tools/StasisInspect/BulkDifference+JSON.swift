import Stasis
import StasisMerge

// MARK: - JSON

extension BulkDifference {
  /// `{"oldCount", "newCount", "differingElements", "changedRanges": [[start, end], …],
  /// "moreRanges", "first": [{"index", "fields": [{"field", "old", "new"}]}]}`: ranges end
  /// exclusive; with `.allElements` every range and every differing element, streamed.
  func writeJSON(to json: StreamedJSON, listing: BulkListing) {
    let all = listing == .allElements
    json.object([
      ("oldCount", { json.number(oldCount) }),
      ("newCount", { json.number(newCount) }),
      ("differingElements", { json.number(differing) }),
      ("moreRanges", { json.number(all ? 0 : rangeCount - ranges.count) }),
      (
        "changedRanges",
        {
          json.array {
            let write = { (range: Range<Int>) in json.array([range.lowerBound, range.upperBound]) { json.number($0) } }
            if all { forEachChangedRange(write) } else { ranges.forEach(write) }
          }
        }
      ),
      (
        "first",
        {
          json.array {
            if all {
              forEachChangedRange { range in
                for index in range { writeChange(changes(at: index), to: json) }
              }
            } else {
              for change in first { writeChange(change, to: json) }
            }
          }
        }
      ),
    ])
  }

  private func writeChange(_ change: ElementChange, to json: StreamedJSON) {
    json.object([
      ("index", { json.number(change.index) }),
      (
        "fields",
        {
          json.array(change.fields) { field in
            json.object([
              ("field", { json.string(field.name) }),
              ("old", { json.value(field.old, listing: .summary) }),
              ("new", { json.value(field.new, listing: .summary) }),
            ])
          }
        }
      ),
    ])
  }
}
