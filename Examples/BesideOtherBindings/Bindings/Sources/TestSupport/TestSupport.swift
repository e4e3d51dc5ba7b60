/// A target named as Stasis once named one of its own.
public let testSupportName = "TestSupport"
