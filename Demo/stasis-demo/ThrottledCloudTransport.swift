#if Cloud
  import StasisCloud

  /// The cloud over a slow link (`--upload-rate`): each request waits as long as its body
  /// takes at `bytesPerSecond` before it goes, so an upload's time follows its size, as on a
  /// phone's uplink. The wait is cancellable: an upload cut by the background budget stops
  /// at once, as a cancelled request.
  struct ThrottledCloudTransport: CloudTransport {
    /// The transport that sends.
    let wrapped: any CloudTransport
    /// The link's speed, bytes per second (more than 0).
    let bytesPerSecond: Int

    func send(_ request: CloudRequest, to server: CloudCredentials) async throws(CloudError) -> CloudResponse {
      let bytes = request.body?.count ?? 0
      if bytes > 0 {
        // This is the point of the option: a slow link. Not synchronisation.
        let wait = Duration.seconds(Double(bytes) / Double(bytesPerSecond))
        do {
          try await ContinuousClock().sleep(for: wait)
        } catch {
          throw CloudError(.cancelled, "\(request.method) \(request.path) was cancelled while its \(bytes) bytes went")
        }
      }
      return try await wrapped.send(request, to: server)
    }
  }
#endif
