import { SearchForm } from "@/components/search-form";

export default function NotFound() {
  return (
    <div className="state">
      <h1>Nothing here</h1>
      <p>That page does not exist. An entity page is /entity/ followed by a domain name.</p>
      <SearchForm />
      <p>
        <a href="/">Back to search</a>
      </p>
    </div>
  );
}
