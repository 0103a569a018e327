import Link from "next/link";
import { SearchForm } from "@/components/search-form";

export default function NotFound() {
  return (
    <div className="state">
      <h1>Nothing here</h1>
      <p>That page does not exist. An entity page is /entity/ followed by a domain name.</p>
      <SearchForm />
      <p>
        <Link href="/">Back to search</Link>
      </p>
    </div>
  );
}
