/// The coding key of an array element: its index. Shared by the save-value encoder and decoder.
struct IndexKey: CodingKey {
  let intValue: Int?
  let stringValue: String
  init(_ index: Int) {
    intValue = index
    stringValue = "\(index)"
  }
  init?(stringValue: String) { return nil }
  init?(intValue: Int) { self.init(intValue) }
}
