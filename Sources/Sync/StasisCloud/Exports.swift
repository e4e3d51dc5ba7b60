// The merge and the conflict policies are network-free (StasisMerge, which the demo game uses
// alone); a game that syncs gets them with `import StasisCloud`.
@_exported import StasisMerge

#if !Cloud
  #error(
    "StasisCloud needs the Stasis package's `Cloud` trait: depend on it without `traits: []` (or with `traits: [\"Cloud\"]`)"
  )
#endif
