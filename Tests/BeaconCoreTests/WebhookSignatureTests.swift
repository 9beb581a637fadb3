import BeaconCore
import Testing

/// Base64 against RFC 4648's test vectors, and the reading of `whsec_` secrets.
struct WebhookSignatureTests {
    @Test func base64MatchesRFC4648() {
        let vectors = [
            ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
        }
        let all = (0...255).map { UInt8($0) }
        #expect(Base64.decode(Base64.encode(all)) == all)
        #expect(Base64.encode([0xFB, 0xFF]) == "+/8=")
        #expect(Base64.decode("Zm9vYg") == Array("foob".utf8), "padding may be left off")
        for bad in ["Zm9v!", "Z", "Zg=a", "Zg===", "Zm=9v"] { #expect(Base64.decode(bad) == nil, "\(bad)") }
    }

    @Test func aStandardSecretIsWhsecThenBase64OfItsKey() throws {
        let key = (0..<32).map { UInt8($0) }
        #expect(try WebhookSignature.standardKey("whsec_" + Base64.encode(key)).get() == key)
        let problems = [
            "s3cret", "whsec_???", "whsec_" + Base64.encode([1, 2, 3]),
            "whsec_" + Base64.encode(Array(repeating: 7, count: 65)),
        ]
        for text in problems {
            guard case let .failure(problem) = WebhookSignature.standardKey(text) else {
                Issue.record("\(text) was taken")
                continue
            }
            #expect(!problem.message.isEmpty)
        }
    }
}

/// Credentials in a webhook's URL never reach an answer (issue 38 #12).
@Suite struct URLRedactionTests {
    @Test func userinfoAndQueryValuesAreMaskedTheRestKept() {
        #expect(
            URLRedaction.redact("https://user:pw@crm.example:8443/hook?key=s3cret&v=2#frag")
                == "https://***@crm.example:8443/hook?key=***&v=***#***")
        #expect(URLRedaction.redact("http://127.0.0.1:9/hook") == "http://127.0.0.1:9/hook")
        #expect(URLRedaction.redact("http://h/p?flag") == "http://h/p?flag")
        #expect(URLRedaction.redact("not a url") == "not a url")
    }
}
