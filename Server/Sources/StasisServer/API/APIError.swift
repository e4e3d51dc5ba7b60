import HTTPTypes
import Hummingbird

/// An error the API answers with: a status and `{"error": "…"}`, plus `head` for a conflict.
struct APIError: HTTPResponseError {
  var status: HTTPResponse.Status
  var message: String
  var head: RevisionMetadata?
  var headers: HTTPFields = [:]

  init(_ status: HTTPResponse.Status, _ message: String, head: RevisionMetadata? = nil) {
    self.status = status
    self.message = message
    self.head = head
  }

  func response(from request: Request, context: some RequestContext) throws -> Response {
    var object: [String: JSON] = ["error": .string(message)]
    if let head { object["head"] = head.json }
    var response = jsonResponse(object, status: status)
    for field in headers { response.headers.append(field) }
    return response
  }
}
