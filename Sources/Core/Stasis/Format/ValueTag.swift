/// The one-byte tag before every value of a tree section (docs/FORMAT.md), and the scalar
/// types of bulk layout fields, which use the same numbers (`true`'s tag stands for `bool`).
enum ValueTag: UInt8 {
  case null = 0x00
  case falseValue = 0x01
  case trueValue = 0x02
  case int8 = 0x03
  case int16 = 0x04
  case int32 = 0x05
  case int64 = 0x06
  case uint8 = 0x07
  case uint16 = 0x08
  case uint32 = 0x09
  case uint64 = 0x0A
  case float32 = 0x0B
  case float64 = 0x0C
  case string = 0x0D
  case bytes = 0x0E
  case array = 0x0F
  case object = 0x10
  case bulk = 0x11
}
